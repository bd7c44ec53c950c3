/**
 * Turns channel values and pending-write values into small references plus content-addressed
 * blobs, and back.
 *
 * Why: a conversation's `messages` channel grows every turn. Storing it whole at each checkpoint
 * (what the SQLite and MongoDB savers do) makes storage quadratic in the conversation length. Here a
 * plain array is serialized element by element; each element larger than a few bytes becomes a
 * blob whose id is the hash of its bytes, so an element already stored by an earlier checkpoint is
 * referenced again, never written again. Values larger than a Firestore document are cut into
 * chunks, each its own blob. References name every blob id up front, so a reader fetches all the
 * blobs of a checkpoint in one `getAll`, however large the values are.
 */
import { createHash } from "node:crypto";
import type { SerializerProtocol } from "@langchain/langgraph-checkpoint";

/** Largest chunk stored in one blob document (Firestore: 1 MiB per document, 1,048,487 per field). */
export const CHUNK_BYTES = 1_000_000;
/** A serialized value up to this size stays inline in its checkpoint document. */
export const INLINE_BYTES = 1024;
/** An array element up to this size stays inline in the array's reference. */
const INLINE_ELEMENT_BYTES = 64;
/** Element-split references larger than this fall back to one chunked blob (keeps the doc small). */
const MAX_ARRAY_REF_BYTES = 256 * 1024;

/** A JSON value larger than this has its long strings stored as blobs of their own. */
const SPLIT_BYTES = 2048;
/** Strings at least this long are moved out of a JSON value into their own blob. */
const LONG_STRING = 1024;

// Reference format: a header byte (kind << 4 | type code), then the kind's body. Kept compact
// because every checkpoint document carries one reference per element of every array channel.
const INLINE = 0; // varint length, bytes
const BLOB = 1; // 16-byte blob id (one chunk)
const CHUNKS = 2; // varint count, count × 16-byte ids
const SPLIT = 3; // varint n, skeleton leaf, n string leaves (JSON with long strings moved out)
const ARRAY = 4; // varint n, n leaves (element-split array)
const TYPES = ["json", "bytes"];
const OTHER_TYPE = 15;
const HASH_BYTES = 16;

/** A value to store: its encoded reference and the blobs (id → bytes) it points to. */
export interface EncodedValue {
  ref: Buffer;
  blobs: Map<string, Buffer>;
}

/** Blob id: the first 128 bits of SHA-256 of the bytes, base64url (22 characters). */
export function blobId(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest().subarray(0, HASH_BYTES).toString("base64url");
}

class RefWriter {
  private parts: Buffer[] = [];
  header(kind: number, type = "bytes") {
    const code = TYPES.indexOf(type);
    this.parts.push(Buffer.from([(kind << 4) | (code < 0 ? OTHER_TYPE : code)]));
    if (code < 0) {
      const b = Buffer.from(type, "utf8");
      this.varint(b.length);
      this.raw(b);
    }
  }
  varint(n: number) {
    const bytes: number[] = [];
    do {
      let b = n % 128;
      n = Math.floor(n / 128);
      if (n > 0) b |= 128;
      bytes.push(b);
    } while (n > 0);
    this.parts.push(Buffer.from(bytes));
  }
  raw(b: Buffer) {
    this.parts.push(b);
  }
  done(): Buffer {
    return Buffer.concat(this.parts);
  }
}

class RefReader {
  private at = 0;
  constructor(private readonly buf: Buffer) {}
  header(): { kind: number; type: string } {
    const h = this.buf.readUInt8(this.at++);
    const code = h & 15;
    const type = code === OTHER_TYPE ? this.raw(this.varint()).toString("utf8") : TYPES[code];
    if (type === undefined) throw new Error(`unknown serializer type code ${code} in checkpoint reference`);
    return { kind: h >> 4, type };
  }
  varint(): number {
    let n = 0;
    let mul = 1;
    for (;;) {
      const b = this.buf.readUInt8(this.at++);
      n += (b & 127) * mul;
      if (b < 128) return n;
      mul *= 128;
    }
  }
  raw(n: number): Buffer {
    const b = this.buf.subarray(this.at, this.at + n);
    if (b.length !== n) throw new Error("truncated checkpoint reference");
    this.at += n;
    return b;
  }
  id(): string {
    return this.raw(HASH_BYTES).toString("base64url");
  }
}

/** Writes bytes as inline, one blob, or 1 MB chunks. */
function writeBytes(
  w: RefWriter,
  type: string,
  bytes: Buffer,
  inlineMax: number,
  blobs: Map<string, Buffer>,
) {
  if (bytes.length <= inlineMax) {
    w.header(INLINE, type);
    w.varint(bytes.length);
    w.raw(bytes);
    return;
  }
  const count = Math.ceil(bytes.length / CHUNK_BYTES);
  w.header(count === 1 ? BLOB : CHUNKS, type);
  if (count > 1) w.varint(count);
  for (let i = 0; i < count; i++) {
    const chunk = bytes.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES);
    const id = blobId(chunk);
    blobs.set(id, chunk);
    w.raw(Buffer.from(id, "base64url"));
  }
}

type JsonPath = Array<string | number>;

/**
 * Moves long strings out of a JSON document. Why: LangGraph saves a node's messages as a pending
 * write before the messages reducer gives them an id, so the same tool result is serialized twice
 * with a small difference; its long content, stored once by content, is shared by both.
 */
function extractLongStrings(text: string): { skeleton: Buffer; strings: string[] } | undefined {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch {
    return undefined;
  }
  const paths: JsonPath[] = [];
  const strings: string[] = [];
  const walk = (node: unknown, path: JsonPath, set: (v: null) => void) => {
    if (typeof node === "string") {
      if (node.length >= LONG_STRING) {
        paths.push(path);
        strings.push(node);
        set(null);
      }
    } else if (Array.isArray(node)) {
      node.forEach((v, i) => walk(v, [...path, i], () => (node[i] = null)));
    } else if (node && typeof node === "object") {
      const obj = node as Record<string, unknown>;
      for (const k of Object.keys(obj)) walk(obj[k], [...path, k], () => (obj[k] = null));
    }
  };
  walk(root, [], () => (root = null));
  if (strings.length === 0) return undefined;
  return { skeleton: Buffer.from(JSON.stringify({ p: paths, j: root }), "utf8"), strings };
}

function restoreLongStrings(skeleton: Buffer, strings: string[]): Buffer {
  const { p, j } = JSON.parse(skeleton.toString("utf8")) as { p: JsonPath[]; j: unknown };
  let root = j;
  p.forEach((path, n) => {
    if (path.length === 0) {
      root = strings[n];
      return;
    }
    let node = root as Record<string | number, unknown>;
    for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
    node[path[path.length - 1]] = strings[n];
  });
  return Buffer.from(JSON.stringify(root), "utf8");
}

function writeLeaf(w: RefWriter, leaf: Leaf, inlineMax: number, blobs: Map<string, Buffer>) {
  if (leaf.type === "json" && leaf.bytes.length > SPLIT_BYTES) {
    const split = extractLongStrings(leaf.bytes.toString("utf8"));
    if (split) {
      w.header(SPLIT, leaf.type);
      w.varint(split.strings.length);
      writeBytes(w, "bytes", split.skeleton, INLINE_ELEMENT_BYTES, blobs);
      for (const str of split.strings)
        writeBytes(w, "bytes", Buffer.from(str, "utf8"), INLINE_ELEMENT_BYTES, blobs);
      return;
    }
  }
  writeBytes(w, leaf.type, leaf.bytes, inlineMax, blobs);
}

type Leaf = { type: string; bytes: Buffer };

/** Elements that serialize on their own exactly as they do inside the array. */
function splittable(value: unknown): value is unknown[] {
  if (!Array.isArray(value) || Object.getPrototypeOf(value) !== Array.prototype) return false;
  return value.every(
    (v) =>
      v !== undefined &&
      typeof v !== "function" &&
      typeof v !== "symbol" &&
      typeof v !== "bigint" &&
      !ArrayBuffer.isView(v),
  );
}

async function leafOf(serde: SerializerProtocol, value: unknown): Promise<Leaf> {
  const [type, bytes] = await serde.dumpsTyped(value);
  return { type, bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
}

/** Serializes `value` into a reference and the blobs it needs. */
export async function encodeValue(serde: SerializerProtocol, value: unknown): Promise<EncodedValue> {
  const blobs = new Map<string, Buffer>();
  if (splittable(value) && value.length > 1) {
    const leaves = await Promise.all(value.map((v) => leafOf(serde, v)));
    const total = leaves.reduce((n, l) => n + l.bytes.length, 0);
    if (total > INLINE_BYTES) {
      const w = new RefWriter();
      w.header(ARRAY);
      w.varint(leaves.length);
      for (const leaf of leaves) writeLeaf(w, leaf, INLINE_ELEMENT_BYTES, blobs);
      const ref = w.done();
      if (ref.length <= MAX_ARRAY_REF_BYTES) return { ref, blobs };
      blobs.clear();
    }
  }
  const w = new RefWriter();
  writeLeaf(w, await leafOf(serde, value), INLINE_BYTES, blobs);
  return { ref: w.done(), blobs };
}

/** Thrown when a reference points to a blob that is not stored. */
export class MissingBlobError extends Error {
  constructor(readonly blobId: string) {
    super(`blob ${blobId} is missing`);
    this.name = "MissingBlobError";
  }
}

/** Walks a reference; with `blobs`, returns each leaf's type and bytes, else only collects ids. */
function walkRef(ref: Buffer, blobs: ReadonlyMap<string, Buffer> | undefined, ids: string[]): Leaf[] {
  const r = new RefReader(ref);
  const part = (id: string): Buffer => {
    ids.push(id);
    if (!blobs) return Buffer.alloc(0);
    const b = blobs.get(id);
    if (!b) throw new MissingBlobError(id);
    return b;
  };
  const bytes = (kind: number): Buffer => {
    if (kind === INLINE) return r.raw(r.varint());
    if (kind === BLOB) return part(r.id());
    if (kind === CHUNKS) {
      const n = r.varint();
      const parts: Buffer[] = [];
      for (let i = 0; i < n; i++) parts.push(part(r.id()));
      return Buffer.concat(parts);
    }
    throw new Error(`unknown checkpoint reference kind ${kind}`);
  };
  const leaf = (): Leaf => {
    const { kind, type } = r.header();
    if (kind !== SPLIT) return { type, bytes: bytes(kind) };
    const n = r.varint();
    const skeleton = bytes(r.header().kind);
    const strings: string[] = [];
    for (let i = 0; i < n; i++) strings.push(bytes(r.header().kind).toString("utf8"));
    return { type, bytes: blobs ? restoreLongStrings(skeleton, strings) : Buffer.alloc(0) };
  };
  if (ref[0] >> 4 === ARRAY) {
    r.header();
    const n = r.varint();
    const out: Leaf[] = [];
    for (let i = 0; i < n; i++) out.push(leaf());
    return out;
  }
  return [leaf()];
}

/** Blob ids a reference points to, in order (used to fetch them all in one `getAll`). */
export function refBlobIds(ref: Buffer): string[] {
  const ids: string[] = [];
  walkRef(ref, undefined, ids);
  return ids;
}

/** Rebuilds a value from its reference and the fetched blobs. */
export async function decodeValue(
  serde: SerializerProtocol,
  ref: Buffer,
  blobs: ReadonlyMap<string, Buffer>,
): Promise<unknown> {
  const leaves = walkRef(ref, blobs, []);
  // Copies: a subarray would alias the reference or blob buffer.
  const values = await Promise.all(leaves.map((l) => serde.loadsTyped(l.type, new Uint8Array(l.bytes))));
  return ref[0] >> 4 === ARRAY ? values : values[0];
}
