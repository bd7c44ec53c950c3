/**
 * Errors across a boundary (the DuckDB workers, the upload ingest child, a stored error body): one
 * wire shape, rebuilt and checked against the contract — a code or category it does not know is
 * `internal`, never cast through.
 */
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../functions/src/config";
import { QuarryError } from "../../../functions/src/errors";
import { WarehouseError } from "../../../functions/src/tools/types";
import { fromWire, toWire } from "../../../functions/src/tools/wire-error";

/** As a child's reply crosses: structured-cloned plain data. */
const across = (err: unknown) => fromWire(structuredClone(toWire(err)));

describe("errors across a process boundary", () => {
  it("keep a Quarry error's code and words", () => {
    const back = across(new QuarryError("payload_too_large:upload", "The file is 40 MB; the limit is 30."));
    expect(back).toBeInstanceOf(QuarryError);
    expect((back as QuarryError).code).toBe("payload_too_large:upload");
    expect((back as QuarryError).status).toBe(413);
    expect(back.message).toBe("The file is 40 MB; the limit is 30.");
  });

  it("keep a warehouse error's category, details and out-of-scope tables", () => {
    const sent = new WarehouseError(
      "not_found",
      "No table x",
      { position: { line: 1, column: 8 } },
      {
        outOfScope: ["finance.salaries"],
      },
    );
    const back = across(sent) as WarehouseError;
    expect(back).toBeInstanceOf(WarehouseError);
    expect(back.category).toBe("not_found");
    expect(back.details).toEqual({ position: { line: 1, column: 8 } });
    expect(back.outOfScope).toEqual(["finance.salaries"]);
  });

  it("make a code or category the contract does not know internal, keeping the words", () => {
    const code = fromWire({ name: "QuarryError", code: "quota:made_up", message: "over" });
    expect((code as QuarryError).code).toBe("internal");
    expect(code.message).toBe("over");
    const category = fromWire({ name: "WarehouseError", category: "exploded", message: "boom" });
    expect((category as WarehouseError).category).toBe("internal");
    expect(QuarryError.fromWire({ error: 42, message: "" }).code).toBe("internal");
    expect(QuarryError.fromWire({ error: "quota:questions", message: "slow down" }).code).toBe(
      "quota:questions",
    );
  });

  it("keep a configuration error's kind and anything else's name", () => {
    expect(across(new ConfigError("QUARRY_X is not a number"))).toBeInstanceOf(ConfigError);
    const other = across(new RangeError("too far"));
    expect(other.name).toBe("RangeError");
    expect(other).not.toBeInstanceOf(QuarryError);
  });
});
