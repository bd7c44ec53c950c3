/**
 * Which Firestore emulator the launcher (`npm start`, the test stacks) runs, from what a machine
 * has: Google's Java emulator when installed, else firebase-tools' own on Java 21+, else one line
 * that names what to install.
 */
import { describe, expect, it } from "vitest";
import { chooseFirestoreEmulator } from "../../scripts/stack.mjs";

const GOOGLE = "/opt/sdk/platform/cloud-firestore-emulator/cloud_firestore_emulator";
const machine = (has: string[], javaMajor: number) => ({
  candidates: [undefined, "/nowhere/cloud_firestore_emulator", GOOGLE],
  exists: (p: string) => has.includes(p),
  javaMajor,
});

describe("the Firestore emulator the stack runs", () => {
  it("is Google's when it is installed, and says which", () => {
    const chosen = chooseFirestoreEmulator(machine([GOOGLE], 17));
    expect(chosen).toMatchObject({ kind: "java", bin: GOOGLE });
    expect(chosen.says).toContain("Google's");
    expect(chosen.says).toContain(GOOGLE);
  });

  it("takes the first candidate that exists (QUARRY_FIRESTORE_EMULATOR_BIN before the default)", () => {
    const chosen = chooseFirestoreEmulator({
      candidates: ["/mine/cloud_firestore_emulator", GOOGLE],
      exists: () => true,
      javaMajor: 21,
    });
    expect(chosen.bin).toBe("/mine/cloud_firestore_emulator");
  });

  it("falls back to firebase-tools' own on Java 21+, saying so and how to get Google's", () => {
    const chosen = chooseFirestoreEmulator(machine([], 21));
    expect(chosen.kind).toBe("firebase-tools");
    expect(chosen.bin).toBeUndefined();
    expect(chosen.says).toMatch(/firebase-tools' own, Java 21/);
    expect(chosen.says).toContain("gcloud components install cloud-firestore-emulator");
  });

  it("names Java 21 or Google's emulator when neither can run (Java 17, none installed)", () => {
    expect(() => chooseFirestoreEmulator(machine([], 17))).toThrow(
      /firebase-tools' own needs Java 21\+ \(this machine has Java 17\).*gcloud components install cloud-firestore-emulator/,
    );
  });

  it("names Java when there is none, in one line", () => {
    let message = "";
    try {
      chooseFirestoreEmulator(machine([], 0));
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/no `java` is on the PATH\. Install Java 21\+/);
    expect(message).not.toContain("\n");
  });

  it("names Java 17 when Google's emulator is there but Java is missing or too old", () => {
    expect(() => chooseFirestoreEmulator(machine([GOOGLE], 0))).toThrow(/needs Java 17 or newer.*no `java`/);
    expect(() => chooseFirestoreEmulator(machine([GOOGLE], 11))).toThrow(/has Java 11: install a Java 17\+/);
  });
});
