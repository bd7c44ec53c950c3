/**
 * Errors across a process boundary, one shape for both child protocols (the DuckDB workers and the
 * upload ingest): a Quarry error keeps its code, a warehouse error its category and details, and
 * each is checked when it is read back — a code or category the contract does not know becomes
 * `internal`, never an unchecked cast.
 */
import { ConfigError } from "../config";
import { WAREHOUSE_ERROR_CATEGORIES, type WarehouseErrorCategory } from "../contract/events";
import { QuarryError } from "../errors";
import { WarehouseError, type WarehouseErrorDetails } from "./types";

/** What crosses: plain data. */
export interface WireError {
  name: string;
  message: string;
  /** A QuarryError's code. */
  code?: string;
  /** A WarehouseError's category and details. */
  category?: string;
  details?: WarehouseErrorDetails;
  /** The tables a scope refusal was about (for the audit log; never shown to the model). */
  outOfScope?: string[];
}

const CATEGORIES: ReadonlySet<string> = new Set(WAREHOUSE_ERROR_CATEGORIES);

/** Any thrown value as it crosses. */
export function toWire(err: unknown): WireError {
  if (err instanceof QuarryError) return { name: err.name, message: err.message, code: err.code };
  if (err instanceof WarehouseError) {
    return {
      name: "WarehouseError",
      message: err.message,
      category: err.category,
      details: err.details,
      ...(err.outOfScope ? { outOfScope: [...err.outOfScope] } : {}),
    };
  }
  const e = err instanceof Error ? err : new Error(String(err));
  return { name: e.name, message: e.message };
}

/** The error a reply carried, rebuilt and checked. */
export function fromWire(e: WireError): Error {
  if (e.name === "QuarryError" || e.code !== undefined) return QuarryError.fromWire(e);
  if (e.name === "WarehouseError") {
    const category = CATEGORIES.has(e.category ?? "") ? (e.category as WarehouseErrorCategory) : "internal";
    return new WarehouseError(
      category,
      e.message,
      e.details ?? {},
      e.outOfScope ? { outOfScope: e.outOfScope } : {},
    );
  }
  if (e.name === "ConfigError") return new ConfigError(e.message);
  return Object.assign(new Error(e.message), { name: e.name });
}
