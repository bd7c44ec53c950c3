import { describe, it, expect } from "vitest";
import { readFileSync } from "node:fs";
import path from "node:path";

const root = path.resolve(__dirname, "../..");

describe("toolchain", () => {
  it("runs on Node 22, the production runtime (nodejs22)", () => {
    expect(Number(process.versions.node.split(".")[0])).toBe(22);
  });

  it("deploys functions on nodejs22 and declares engines.node 22", () => {
    const firebase = JSON.parse(readFileSync(path.join(root, "firebase.json"), "utf8"));
    expect(firebase.functions[0].runtime).toBe("nodejs22");
    const pkg = JSON.parse(readFileSync(path.join(root, "functions/package.json"), "utf8"));
    expect(pkg.engines.node).toBe("22");
  });
});
