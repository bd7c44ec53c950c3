/**
 * Counts the RPCs a Firestore client sends (by wrapping its request funnels) and sizes what it
 * writes, so tests and the benchmark can state round trips and bytes as facts, not estimates.
 */
import type { Firestore } from "@google-cloud/firestore";

/** One RPC: its method (batchGetDocuments, runQuery, commit, …) and, for commits, what it wrote. */
export interface Rpc {
  method: string;
  documents: number;
  bytes: number;
}

type ProtoValue = {
  stringValue?: string;
  bytesValue?: Uint8Array | string;
  mapValue?: { fields?: Record<string, ProtoValue> };
  arrayValue?: { values?: ProtoValue[] };
  nullValue?: unknown;
  booleanValue?: boolean;
  integerValue?: unknown;
  doubleValue?: unknown;
  timestampValue?: unknown;
  valueType?: string;
};

/** Firestore's storage size of a document name: each segment's UTF-8 bytes + 1, plus 16. */
function nameSize(path: string): number {
  return path.split("/").reduce((n, s) => n + Buffer.byteLength(s, "utf8") + 1, 0) + 16;
}

function protoSize(v: ProtoValue): number {
  if (v.stringValue !== undefined) return Buffer.byteLength(v.stringValue, "utf8") + 1;
  if (v.bytesValue !== undefined)
    return typeof v.bytesValue === "string"
      ? Buffer.from(v.bytesValue, "base64").length
      : v.bytesValue.length;
  if (v.mapValue) return fieldsSize(v.mapValue.fields ?? {});
  if (v.arrayValue) return (v.arrayValue.values ?? []).reduce((n, x) => n + protoSize(x), 0);
  if (v.booleanValue !== undefined || v.nullValue !== undefined) return 1;
  return 8;
}

function fieldsSize(fields: Record<string, ProtoValue>): number {
  return Object.entries(fields).reduce((n, [k, v]) => n + Buffer.byteLength(k, "utf8") + 1 + protoSize(v), 0);
}

/** Firestore's storage size of a document given as JS data (what a snapshot's data() returns). */
export function docSize(path: string, data: Record<string, unknown>): number {
  const size = (v: unknown): number => {
    if (v === null || typeof v === "boolean") return 1;
    if (typeof v === "string") return Buffer.byteLength(v, "utf8") + 1;
    if (typeof v === "number") return 8;
    if (v instanceof Uint8Array) return v.length;
    if (Array.isArray(v)) return v.reduce((n, x) => n + size(x), 0);
    if (typeof v === "object" && v && "toMillis" in v) return 8;
    if (typeof v === "object" && v) {
      return Object.entries(v).reduce((n, [k, x]) => n + Buffer.byteLength(k, "utf8") + 1 + size(x), 0);
    }
    return 8;
  };
  return nameSize(path) + size(data) + 32;
}

/** Wraps `firestore`'s request funnels; returns the live log. */
export function countRpcs(firestore: Firestore): Rpc[] {
  const log: Rpc[] = [];
  const f = firestore as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const funnel of ["request", "requestStream"]) {
    const original = f[funnel].bind(firestore);
    f[funnel] = (method: unknown, ...rest: unknown[]) => {
      const request = (funnel === "request" ? rest[0] : rest[1]) as {
        writes?: Array<{ update?: { name: string; fields?: Record<string, ProtoValue> } }>;
      };
      const rpc: Rpc = { method: String(method), documents: 0, bytes: 0 };
      for (const w of request?.writes ?? []) {
        rpc.documents += 1;
        if (w.update) {
          const path = w.update.name.split("/documents/")[1] ?? w.update.name;
          rpc.bytes += nameSize(path) + fieldsSize(w.update.fields ?? {}) + 32;
        }
      }
      log.push(rpc);
      return original(method, ...rest);
    };
  }
  return log;
}
