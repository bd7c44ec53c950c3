/**
 * Images and PDFs that go with a question, and files that become tables of the conversation: what
 * kind a dropped file is, how far an image is scaled down before it is sent, whether a table file
 * is sent gzip-compressed or refused for its size, and the content blocks a question carries
 * (agent-chat-ui's format, which the API keeps in the thread's state). Pure: the browser work
 * (decoding, canvas, compression) is in `chat/image.ts` and `files/upload.ts`.
 */
import { UPLOAD_BODY_MAX_BYTES, type ClientLimits } from "@quarry/functions/contract";

const MIB = 1024 * 1024;

/** Longest side of an image sent with a question, pixels (larger ones are scaled down first). */
export const MAX_IMAGE_SIDE = 2048;
/** JPEG quality of a re-encoded image without transparency. */
const JPEG_QUALITY = 0.85;
/** A CSV/TSV larger than this is gzip-compressed before it is sent (text shrinks ~5–10×). */
export const GZIP_ABOVE_BYTES = 8 * MIB;

/** The limits `GET /client-config` announces (`limits`), with the server's defaults. */
export const DEFAULT_LIMITS: ClientLimits = { attachmentMaxMb: 10, uploadMaxMb: 50, uploadMaxFiles: 10 };

const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
const PDF = "application/pdf";

/** A table file's format and the Content-Type it is sent with. */
const TABLE_TYPES: Record<string, { format: "csv" | "tsv" | "xlsx" | "parquet"; contentType: string }> = {
  csv: { format: "csv", contentType: "text/csv" },
  tsv: { format: "tsv", contentType: "text/tab-separated-values" },
  tab: { format: "tsv", contentType: "text/tab-separated-values" },
  xlsx: {
    format: "xlsx",
    contentType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  },
  parquet: { format: "parquet", contentType: "application/vnd.apache.parquet" },
};

/** What a file the person brings is: an image or PDF for the next question, a table, or neither. */
export type FileKind = "image" | "pdf" | "table" | null;

const extension = (name: string) => /\.([^.]+)$/.exec(name.toLowerCase())?.[1] ?? "";

/** The kind of a dropped, pasted or picked file, by its type and else its name's extension. */
export function fileKind(file: { name: string; type: string }): FileKind {
  const ext = extension(file.name);
  if (IMAGE_TYPES.includes(file.type)) return "image";
  if (file.type === PDF || ext === "pdf") return "pdf";
  if (TABLE_TYPES[ext]) return "table";
  if (["png", "jpg", "jpeg", "gif", "webp"].includes(ext)) return "image";
  return null;
}

/** Why a file is not taken at all, in the server's style (what it is, what to send instead). */
export function unsupportedFile(name: string): string {
  return (
    `${name} is neither an image (PNG, JPEG, GIF, WebP), a PDF nor a table (CSV, TSV, XLSX, Parquet). ` +
    "Send one of those."
  );
}

const mb = (bytes: number) => (bytes / MIB).toFixed(1);

/** A size that fits inside `max`×`max`, keeping the aspect ratio (never enlarged, never 0). */
export function fitWithin(width: number, height: number, max = MAX_IMAGE_SIDE) {
  const scale = Math.min(1, max / Math.max(width, height));
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

/** How an image is sent: as it is, or drawn at `width`×`height` and re-encoded as `mimeType`. */
export type ImagePlan =
  | { reencode: false }
  | { reencode: true; width: number; height: number; mimeType: "image/jpeg" | "image/png"; quality?: number };

/**
 * Whether an image is re-encoded before it goes with a question: when its longest side is over
 * {@link MAX_IMAGE_SIDE} or its bytes over the attachment limit. Transparency stays PNG; everything
 * else becomes JPEG at {@link JPEG_QUALITY} (a photo's PNG is many times its JPEG).
 */
export function imagePlan(
  image: { width: number; height: number; bytes: number; transparent: boolean },
  maxBytes: number,
): ImagePlan {
  if (Math.max(image.width, image.height) <= MAX_IMAGE_SIDE && image.bytes <= maxBytes)
    return { reencode: false };
  const size = fitWithin(image.width, image.height);
  return image.transparent
    ? { reencode: true, ...size, mimeType: "image/png" }
    : { reencode: true, ...size, mimeType: "image/jpeg", quality: JPEG_QUALITY };
}

/**
 * A smaller size for an encoding that came out `bytes` over `maxBytes`: bytes grow with the pixel
 * count, so each side shrinks by √(max/bytes), with a 10% margin so the next try fits.
 */
export function shrinkToFit(width: number, height: number, bytes: number, maxBytes: number) {
  const scale = Math.sqrt(maxBytes / bytes) * 0.9;
  return fitWithin(width, height, Math.floor(Math.max(width, height) * Math.min(scale, 0.9)));
}

/** Why an attachment is refused in the page, in the server's wording (`payload_too_large:attachment`). */
export function attachmentTooLarge(name: string, bytes: number, maxMb: number): string {
  return (
    `${name} is ${mb(bytes)} MB; an attachment may be at most ${maxMb} MB (QUARRY_ATTACHMENT_MAX_MB). ` +
    "Send a smaller file."
  );
}

/** How a table file is sent, or why it is refused before a byte of it is read. */
export type UploadPlan =
  { ok: true; gzip: boolean; contentType: string; format: string } | { ok: false; error: string };

/**
 * The page's checks on a table file from its name and size alone (`File.size`, nothing read): over
 * `uploadMaxMb` it is refused; a CSV/TSV over {@link GZIP_ABOVE_BYTES} is sent gzip-compressed
 * (an HTTP function takes at most 32 MiB); an already compressed format (xlsx, Parquet) over
 * {@link UPLOAD_BODY_MAX_BYTES} cannot be sent at all.
 */
export function uploadPlan(file: { name: string; size: number }, uploadMaxMb: number): UploadPlan {
  const type = TABLE_TYPES[extension(file.name)];
  if (!type) return { ok: false, error: unsupportedFile(file.name) };
  if (file.size > uploadMaxMb * MIB) {
    return {
      ok: false,
      error:
        `${file.name} is ${mb(file.size)} MB; a file may be at most ${uploadMaxMb} MB (QUARRY_UPLOAD_MAX_MB). ` +
        "Send fewer rows or columns, or split the file.",
    };
  }
  const gzip = (type.format === "csv" || type.format === "tsv") && file.size > GZIP_ABOVE_BYTES;
  if (!gzip && file.size > UPLOAD_BODY_MAX_BYTES)
    return { ok: false, error: bodyTooLarge(file.name, file.size) };
  return { ok: true, gzip, contentType: gzip ? "application/gzip" : type.contentType, format: type.format };
}

/** Why a body (compressed or not) cannot be sent: an HTTP function takes at most this much. */
export function bodyTooLarge(name: string, bytes: number): string {
  return (
    `${name} is ${mb(bytes)} MB as sent; at most ${mb(UPLOAD_BODY_MAX_BYTES)} MB can be sent in one request. ` +
    "Send fewer rows or columns, or split the file."
  );
}

/** An image or PDF going with a question, or one in a question of the conversation's history. */
export interface Attachment {
  kind: "image" | "pdf";
  mimeType: string;
  /** The file's name, when it had one. */
  name?: string;
  /** Base64, without a `data:` prefix. */
  data: string;
}

/** Where the page shows an attachment from: its own bytes, never a remote URL. */
export const dataUrl = (a: Attachment) => `data:${a.mimeType};base64,${a.data}`;

/** An attachment as the content block the API takes (agent-chat-ui's `fileToContentBlock`). */
export function toContentBlock(a: Attachment): Record<string, unknown> {
  return a.kind === "image"
    ? { type: "image", mimeType: a.mimeType, data: a.data, metadata: a.name ? { name: a.name } : {} }
    : { type: "file", mimeType: a.mimeType, data: a.data, metadata: a.name ? { filename: a.name } : {} };
}

const str = (v: unknown) => (typeof v === "string" ? v : undefined);

/** One content block as an attachment: LangChain v1 data blocks, v0 base64 blocks, `image_url` data URLs. */
function blockAttachment(block: unknown): Attachment | undefined {
  if (!block || typeof block !== "object") return undefined;
  const b = block as Record<string, unknown>;
  const meta = (b.metadata ?? {}) as Record<string, unknown>;
  const name = str(meta.name) ?? str(meta.filename);
  let mimeType = str(b.mimeType) ?? str(b.mime_type);
  let data = str(b.data);
  if (b.type === "image_url") {
    const raw = b.image_url;
    const url = str(raw) ?? str((raw as { url?: unknown } | undefined)?.url) ?? "";
    const m = /^data:([\w.+/-]+);base64,(.*)$/s.exec(url);
    if (!m) return undefined;
    [mimeType, data] = [m[1], m[2]];
  }
  if (!mimeType || !data) return undefined;
  const kind = mimeType === PDF ? "pdf" : mimeType.startsWith("image/") ? "image" : undefined;
  if (!kind || (b.type !== "image" && b.type !== "file" && b.type !== "image_url")) return undefined;
  return { kind, mimeType, data, ...(name ? { name } : {}) };
}

/** The images and PDFs of a message's content (a question in history), in their order. */
export function attachmentsOf(content: unknown): Attachment[] {
  if (!Array.isArray(content)) return [];
  return content.map(blockAttachment).filter((a): a is Attachment => !!a);
}
