/**
 * Images and PDFs in a question, checked where they enter: the human message's content blocks as
 * LangChain's clients send them — standard blocks `{type: "image" | "file", mimeType, data}` (what
 * agent-chat-ui sends), the older `{type: "image", source_type: "base64", mime_type, data}`, and
 * OpenAI's `{type: "image_url", image_url: {url: "data:…"}}` — become standard blocks with base64
 * data. Only PNG, JPEG, GIF, WebP and PDF, whose bytes start as their type says; at most
 * MAX_ATTACHMENTS per question, each at most `QUARRY_ATTACHMENT_MAX_MB`; never a URL to fetch (the
 * function would fetch on the person's behalf). Anything else is refused with what to send instead.
 */
import { MAX_ATTACHMENTS } from "../contract/limits";
import { QuarryError } from "../errors";

/** Attachments one question may carry. */

/** The types a question may carry, with the bytes each file of that type starts with. */
const TYPES: Record<string, { kind: "image" | "file"; magic: (b: Buffer) => boolean }> = {
  "image/png": {
    kind: "image",
    magic: (b) => b.subarray(0, 8).equals(Buffer.from("89504e470d0a1a0a", "hex")),
  },
  "image/jpeg": { kind: "image", magic: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  "image/gif": { kind: "image", magic: (b) => /^GIF8[79]a/.test(b.subarray(0, 6).toString("latin1")) },
  "image/webp": {
    kind: "image",
    magic: (b) =>
      b.subarray(0, 4).toString("latin1") === "RIFF" && b.subarray(8, 12).toString("latin1") === "WEBP",
  },
  "application/pdf": { kind: "file", magic: (b) => b.subarray(0, 5).toString("latin1") === "%PDF-" },
};

const ALLOWED = "PNG, JPEG, GIF or WebP images and PDF files";

interface Attachment {
  type: "image" | "file";
  mimeType: string;
  /** Base64, without a data: prefix. */
  data: string;
  metadata?: Record<string, unknown>;
}

type Block = Record<string, unknown> & { type: string };

/**
 * The question's content with its attachments checked and in the standard form; a string (or
 * blocks of text only) comes back as it was.
 */
export function checkAttachments(content: string | Block[], maxMb: number): string | Block[] {
  if (typeof content === "string") return content;
  let count = 0;
  const out = content.map((block, i) => {
    if (block.type === "text") return block;
    const attachment = toAttachment(block, `content[${i}]`, maxMb);
    count += 1;
    return attachment as unknown as Block;
  });
  if (count > MAX_ATTACHMENTS) {
    throw new QuarryError(
      "bad_request:attachment",
      `The question carries ${count} attachments; at most ${MAX_ATTACHMENTS} may go with one question.`,
    );
  }
  return out;
}

function toAttachment(block: Block, where: string, maxMb: number): Attachment {
  const { mimeType, data } = sourceOf(block, where);
  const type = TYPES[mimeType];
  if (!type) {
    throw new QuarryError(
      "bad_request:attachment",
      `${where} is ${mimeType || "of no stated type"}: a question may carry ${ALLOWED}.`,
    );
  }
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(data)) {
    throw new QuarryError(
      "bad_request:attachment",
      `${where}: its data is not base64 (send the file's bytes base64-encoded).`,
    );
  }
  // 3 bytes per 4 characters: the size is known before anything is decoded.
  const bytes = Math.floor((data.length * 3) / 4) - (data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0);
  if (bytes > maxMb * 1024 * 1024) {
    throw new QuarryError(
      "payload_too_large:attachment",
      `${where} is ${(bytes / 1024 / 1024).toFixed(1)} MB; an attachment may be at most ${maxMb} MB ` +
        "(QUARRY_ATTACHMENT_MAX_MB). Send a smaller image (the page scales images down before sending).",
    );
  }
  if (!type.magic(Buffer.from(data.slice(0, 24), "base64"))) {
    throw new QuarryError(
      "bad_request:attachment",
      `${where} says it is ${mimeType}, but its bytes are not a ${mimeType} file: send the file itself.`,
    );
  }
  const metadata =
    block.metadata && typeof block.metadata === "object"
      ? (block.metadata as Record<string, unknown>)
      : undefined;
  return { type: type.kind, mimeType, data, ...(metadata ? { metadata: nameOnly(metadata) } : {}) };
}

/** The block's type and base64 data, from whichever of the three forms it comes in. */
function sourceOf(block: Block, where: string): { mimeType: string; data: string } {
  const str = (v: unknown) => (typeof v === "string" ? v : undefined);
  if (block.type === "image_url") {
    const raw = block.image_url;
    const url = str(raw) ?? str((raw as { url?: unknown } | undefined)?.url) ?? "";
    return fromDataUrl(url, where);
  }
  if (block.type !== "image" && block.type !== "file") {
    throw new QuarryError(
      "bad_request:attachment",
      `${where} is a "${String(block.type).slice(0, 40)}" block: a question carries text, and ${ALLOWED} as image or file blocks.`,
    );
  }
  const url = str(block.url);
  if (url !== undefined) return fromDataUrl(url, where);
  if (block.source_type === "url") return fromDataUrl("", where);
  const data = str(block.data) ?? str(block.base64);
  if (data === undefined) {
    throw new QuarryError(
      "bad_request:attachment",
      `${where} has no data: send the file base64-encoded in data.`,
    );
  }
  return { mimeType: str(block.mimeType) ?? str(block.mime_type) ?? "", data: data.replace(/\s+/g, "") };
}

function fromDataUrl(url: string, where: string): { mimeType: string; data: string } {
  const m = /^data:([\w.+/-]+);base64,(.*)$/s.exec(url);
  if (!m) {
    throw new QuarryError(
      "bad_request:attachment",
      `${where} points at a URL: Quarry does not fetch files from the web. Attach the file itself (base64 data or a data: URL).`,
    );
  }
  return { mimeType: m[1].toLowerCase(), data: m[2].replace(/\s+/g, "") };
}

/** What is kept of a block's metadata: its file name, as clients label attachments by it. */
function nameOnly(meta: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ["name", "filename"]) {
    if (typeof meta[k] === "string") out[k] = (meta[k] as string).slice(0, 200);
  }
  return out;
}
