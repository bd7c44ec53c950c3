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
export const INLINE_ELEMENT_BYTES = 64;
/** Element-split references larger than this fall back to one chunked blob (keeps the doc small). */
const MAX_ARRAY_REF_BYTES = 256 * 1024;

const KIND_INLINE = 0;
const KIND_CHUNKS = 1;
const KIND_ARRAY = 2;
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

type Leaf = { type: string; bytes: Buffer };

class RefWriter {
  private parts: Buffer[] = [];
  u8(n: number) {
    this.parts.push(Buffer.from([n]));
  }
  u32(n: number) {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n);
    this.parts.push(b);
  }
  raw(b: Buffer) {
    this.parts.push(b);
  }
  str(s: string) {
    const b = Buffer.from(s, "utf8");
    if (b.length > 255) throw new Error(`serializer type name too long: ${s}`);
    this.u8(b.length);
    this.raw(b);
  }
  done(): Buffer {
    return Buffer.concat(this.parts);
  }
}

class RefReader {
  private at = 0;
  constructor(private readonly buf: Buffer) {}
  u8(): number {
    return this.buf.readUInt8(this.at++);
  }
  u32(): number {
    const n = this.buf.readUInt32BE(this.at);
    this.at += 4;
    return n;
  }
  raw(n: number): Buffer {
    const b = this.buf.subarray(this.at, this.at + n);
    if (b.length !== n) throw new Error("truncated checkpoint reference");
    this.at += n;
    return b;
  }
  str(): string {
    return this.raw(this.u8()).toString("utf8");
  }
}

function writeLeaf(w: RefWriter, leaf: Leaf, inlineMax: number, blobs: Map<string, Buffer>) {
  if (leaf.bytes.length <= inlineMax) {
    w.u8(KIND_INLINE);
    w.str(leaf.type);
    w.u32(leaf.bytes.length);
    w.raw(leaf.bytes);
    return;
  }
  w.u8(KIND_CHUNKS);
  w.str(leaf.type);
  w.u32(leaf.bytes.length);
  const count = Math.ceil(leaf.bytes.length / CHUNK_BYTES);
  w.u32(count);
  for (let i = 0; i < count; i++) {
    const chunk = leaf.bytes.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES);
    const id = blobId(chunk);
    blobs.set(id, chunk);
    w.raw(Buffer.from(id, "base64url"));
  }
}

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
      w.u8(KIND_ARRAY);
      w.u32(leaves.length);
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

/** Blob ids a reference points to, in order (used to fetch them all in one `getAll`). */
export function refBlobIds(ref: Buffer): string[] {
  const ids: string[] = [];
  const r = new RefReader(ref);
  const leaf = () => {
    const kind = r.u8();
    r.str();
    if (kind === KIND_INLINE) r.raw(r.u32());
    else {
      r.u32();
      const count = r.u32();
      for (let i = 0; i < count; i++) ids.push(r.raw(HASH_BYTES).toString("base64url"));
    }
  };
  if (ref[0] === KIND_ARRAY) {
    r.u8();
    const n = r.u32();
    for (let i = 0; i < n; i++) leaf();
  } else leaf();
  return ids;
}

/** Thrown when a reference points to a blob that is not stored. */
export class MissingBlobError extends Error {
  constructor(readonly blobId: string) {
    super(`blob ${blobId} is missing`);
    this.name = "MissingBlobError";
  }
}

/** Rebuilds a value from its reference and the fetched blobs. */
export async function decodeValue(
  serde: SerializerProtocol,
  ref: Buffer,
  blobs: ReadonlyMap<string, Buffer>,
): Promise<unknown> {
  const r = new RefReader(ref);
  const leaf = async () => {
    const kind = r.u8();
    const type = r.str();
    let bytes: Buffer;
    if (kind === KIND_INLINE) bytes = r.raw(r.u32());
    else if (kind === KIND_CHUNKS) {
      const size = r.u32();
      const count = r.u32();
      const parts: Buffer[] = [];
      for (let i = 0; i < count; i++) {
        const id = r.raw(HASH_BYTES).toString("base64url");
        const part = blobs.get(id);
        if (!part) throw new MissingBlobError(id);
        parts.push(part);
      }
      bytes = Buffer.concat(parts, size);
    } else throw new Error(`unknown checkpoint reference kind ${kind}`);
    // Copy: a subarray would keep the whole reference buffer alive and alias it.
    return serde.loadsTyped(type, new Uint8Array(bytes));
  };
  if (ref[0] === KIND_ARRAY) {
    r.u8();
    const n = r.u32();
    const out: unknown[] = [];
    for (let i = 0; i < n; i++) out.push(await leaf());
    return out;
  }
  return leaf();
}
