import Module from "node:module";
import { Firestore } from "@google-cloud/firestore";
import { describe, expect, it } from "vitest";
import { buildRetryOnce } from "../../functions/src/firestore-client";

type Build = (methodName: string, retryCodes?: number[]) => { retry?: object; otherArgs?: unknown };
const loader = Module.prototype as unknown as { require: (id: string) => unknown };

/** How many modules `fn` requires (each a resolution: files stat'ed, package.json read). */
function requires(fn: () => void): number {
  const original = loader.require;
  let count = 0;
  loader.require = function (this: unknown, id: string) {
    count++;
    return original.call(this, id);
  };
  try {
    fn();
  } finally {
    loader.require = original;
  }
  return count;
}

describe("Firestore call options built once (firestore-client.ts)", () => {
  it("gives each call the client's own options, with no module resolved per call", () => {
    const db = new Firestore({ projectId: "demo-quarry" });
    const build = (db as unknown as { createCallOptions: Build }).createCallOptions.bind(db);
    const asked: [string, number[] | undefined][] = [
      ["commit", [10, 14]],
      ["commit", [10]],
      ["batchGetDocuments", [4, 14]],
      ["runQuery", undefined],
    ];
    const before = asked.map(([m, codes]) => build(m, codes));
    // The client as shipped resolves google-gax/fallback on every call that retries.
    expect(requires(() => build("commit", [10, 14]))).toBeGreaterThan(0);

    buildRetryOnce(db);
    const rebuilt = (db as unknown as { createCallOptions: Build }).createCallOptions.bind(db);
    const after = asked.map(([m, codes]) => rebuilt(m, codes));
    expect(after).toEqual(before);
    after.forEach((options, i) => {
      expect(options.retry === undefined).toBe(before[i].retry === undefined);
      if (options.retry)
        expect(Object.getPrototypeOf(options.retry)).toBe(Object.getPrototypeOf(before[i].retry));
    });
    // A fresh RetryOptions each call, as the client makes (nothing shared between calls to change).
    const again = rebuilt("commit", [10, 14]);
    expect(again.retry).not.toBe(after[0].retry);
    expect(again).toEqual(after[0]);
    expect(requires(() => rebuilt("commit", [10, 14]))).toBe(0);
  });

  it("wraps the client's class once, and another instance gets its own resource header", () => {
    const a = new Firestore({ projectId: "demo-quarry" });
    buildRetryOnce(a);
    const wrapped = (a as unknown as { createCallOptions: Build }).createCallOptions;
    const b = new Firestore({ projectId: "demo-other" });
    buildRetryOnce(b);
    expect((b as unknown as { createCallOptions: Build }).createCallOptions).toBe(wrapped);
    const headers = (db: Firestore) =>
      (db as unknown as { createCallOptions: Build }).createCallOptions("commit", [10]).otherArgs;
    expect(JSON.stringify(headers(b))).toContain("projects/demo-other/databases/(default)");
    expect(JSON.stringify(headers(a))).toContain("projects/demo-quarry/databases/(default)");
  });

  it("leaves a client of another shape alone", () => {
    const odd = Object.create({ other: () => 1 }) as object;
    buildRetryOnce(odd);
    expect(Object.getPrototypeOf(odd)).not.toHaveProperty("createCallOptions");
  });
});
