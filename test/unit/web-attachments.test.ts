/**
 * The page's side of files and images in a conversation (web/src/data/attachments.ts and the
 * places it feeds): how far an image is scaled down and in which format, which table files are
 * gzip-compressed or refused from their size alone, the content blocks a question carries, the
 * images and PDFs of a question rebuilt from thread state after a reload, and the API's upload and
 * attachment refusals shown in its own words.
 */
import { describe, expect, it } from "vitest";
import { UPLOAD_BODY_MAX_BYTES } from "../../functions/src/contract/uploads";
import {
  attachmentsOf,
  fileKind,
  fitWithin,
  GZIP_ABOVE_BYTES,
  imagePlan,
  MAX_IMAGE_SIDE,
  shrinkToFit,
  toContentBlock,
  uploadPlan,
  type Attachment,
} from "../../web/src/data/attachments";
import { errorInWords } from "../../web/src/data/format";
import { turnsFromMessages } from "../../web/src/chat/model";
import { chatReducer, EMPTY_CHAT, humanInput } from "../../web/src/chat/reducer";

const MIB = 1024 * 1024;

describe("scaling an image down before it is sent", () => {
  it("fits the longest side within 2048 px, keeping the aspect ratio, never enlarging", () => {
    expect(fitWithin(4000, 3000)).toEqual({ width: 2048, height: 1536 });
    expect(fitWithin(3000, 4000)).toEqual({ width: 1536, height: 2048 });
    expect(fitWithin(8000, 10)).toEqual({ width: 2048, height: 3 });
    expect(fitWithin(100000, 1)).toEqual({ width: 2048, height: 1 });
    expect(fitWithin(800, 600)).toEqual({ width: 800, height: 600 });
    expect(fitWithin(2048, 2048)).toEqual({ width: 2048, height: 2048 });
  });

  it("sends a small image as it is", () => {
    expect(imagePlan({ width: 1200, height: 900, bytes: 300_000, transparent: false }, 10 * MIB)).toEqual({
      reencode: false,
    });
  });

  it("re-encodes a large photo as JPEG q0.85 at 2048 px, and keeps transparency as PNG", () => {
    expect(imagePlan({ width: 4000, height: 3000, bytes: 2 * MIB, transparent: false }, 10 * MIB)).toEqual({
      reencode: true,
      width: 2048,
      height: 1536,
      mimeType: "image/jpeg",
      quality: 0.85,
    });
    expect(imagePlan({ width: 4000, height: 3000, bytes: 2 * MIB, transparent: true }, 10 * MIB)).toEqual({
      reencode: true,
      width: 2048,
      height: 1536,
      mimeType: "image/png",
    });
  });

  it("re-encodes an image of few pixels but too many bytes (an uncompressed PNG) at its size", () => {
    expect(
      imagePlan({ width: 1000, height: 1000, bytes: 11 * MIB, transparent: false }, 10 * MIB),
    ).toMatchObject({
      reencode: true,
      width: 1000,
      height: 1000,
      mimeType: "image/jpeg",
    });
  });

  it("shrinks an encoding that came out too large so the next one fits by pixel count", () => {
    const next = shrinkToFit(2048, 1536, 16 * MIB, 4 * MIB);
    // √(4/16) × 0.9 = 0.45 of each side.
    expect(next).toEqual({ width: 921, height: 691 });
    expect(next.width * next.height * (16 / (2048 * 1536))).toBeLessThan(4);
    // Even a hair over the limit shrinks (by at least 10%): the loop always makes progress.
    expect(shrinkToFit(2048, 1536, 4 * MIB + 1, 4 * MIB).width).toBeLessThanOrEqual(
      Math.floor(MAX_IMAGE_SIDE * 0.9),
    );
  });
});

describe("what a dropped file is", () => {
  it.each([
    [{ name: "chart.png", type: "image/png" }, "image"],
    [{ name: "photo.JPG", type: "" }, "image"],
    [{ name: "report.pdf", type: "application/pdf" }, "pdf"],
    [{ name: "sales.csv", type: "text/csv" }, "table"],
    [{ name: "sales.CSV", type: "application/vnd.ms-excel" }, "table"],
    [{ name: "data.tsv", type: "" }, "table"],
    [{ name: "book.xlsx", type: "" }, "table"],
    [{ name: "events.parquet", type: "" }, "table"],
    [{ name: "notes.docx", type: "" }, null],
    [{ name: "pic.svg", type: "image/svg+xml" }, null],
  ])("%o is %s", (file, kind) => {
    expect(fileKind(file)).toBe(kind);
  });
});

describe("how a table file is sent", () => {
  it("sends a small CSV as text/csv and an xlsx with its own type", () => {
    expect(uploadPlan({ name: "sales.csv", size: 2 * MIB }, 50)).toEqual({
      ok: true,
      gzip: false,
      contentType: "text/csv",
      format: "csv",
    });
    expect(uploadPlan({ name: "b.xlsx", size: 2 * MIB }, 50)).toMatchObject({
      ok: true,
      gzip: false,
      contentType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    });
    expect(uploadPlan({ name: "e.parquet", size: 1 }, 50)).toMatchObject({
      contentType: "application/vnd.apache.parquet",
    });
  });

  it("gzip-compresses a CSV or TSV over 8 MB, sending it as application/gzip", () => {
    expect(uploadPlan({ name: "big.csv", size: GZIP_ABOVE_BYTES }, 50)).toMatchObject({ gzip: false });
    expect(uploadPlan({ name: "big.csv", size: GZIP_ABOVE_BYTES + 1 }, 50)).toEqual({
      ok: true,
      gzip: true,
      contentType: "application/gzip",
      format: "csv",
    });
    expect(uploadPlan({ name: "big.tsv", size: 40 * MIB }, 50)).toMatchObject({ gzip: true });
  });

  it("refuses a file over the upload limit from its size alone, naming the setting", () => {
    const plan = uploadPlan({ name: "huge.csv", size: 60 * MIB }, 50);
    expect(plan).toEqual({
      ok: false,
      error:
        "huge.csv is 60.0 MB; a file may be at most 50 MB (QUARRY_UPLOAD_MAX_MB). Send fewer rows or columns, or split the file.",
    });
  });

  it("refuses an xlsx or Parquet body a function cannot receive even under the upload limit", () => {
    const plan = uploadPlan({ name: "big.parquet", size: UPLOAD_BODY_MAX_BYTES + 1 }, 50);
    expect(plan.ok).toBe(false);
    expect(!plan.ok && plan.error).toMatch(/^big\.parquet is 31\.0 MB as sent; at most 31\.0 MB/);
    expect(uploadPlan({ name: "ok.parquet", size: UPLOAD_BODY_MAX_BYTES }, 50).ok).toBe(true);
  });

  it("refuses a file that is no table", () => {
    expect(uploadPlan({ name: "notes.docx", size: 10 }, 50)).toMatchObject({
      ok: false,
      error: /notes\.docx is neither/,
    });
  });
});

const png: Attachment = { kind: "image", mimeType: "image/png", name: "q2.png", data: "iVBORw0KGgo=" };
const pdf: Attachment = { kind: "pdf", mimeType: "application/pdf", name: "r.pdf", data: "JVBERi0=" };

describe("the content a question carries, and its history after a reload", () => {
  it("sends agent-chat-ui's blocks after the text, and plain text without attachments", () => {
    expect(humanInput("Why?", "k1", [png, pdf]).messages[0]).toEqual({
      type: "human",
      id: "k1",
      content: [
        { type: "text", text: "Why?" },
        { type: "image", mimeType: "image/png", data: png.data, metadata: { name: "q2.png" } },
        { type: "file", mimeType: "application/pdf", data: pdf.data, metadata: { filename: "r.pdf" } },
      ],
    });
    expect(humanInput("", "k2", [png]).messages[0].content).toEqual([toContentBlock(png)]);
    expect(humanInput("Why?", "k3").messages[0].content).toBe("Why?");
  });

  it("finds a question's images and PDFs in its stored blocks (v1, v0 base64 and image_url data URLs)", () => {
    const content = [
      { type: "text", text: "Compare" },
      toContentBlock(png),
      toContentBlock(pdf),
      { type: "image", source_type: "base64", mime_type: "image/jpeg", data: "/9j/" },
      { type: "image_url", image_url: { url: "data:image/webp;base64,UklGRg==" } },
      { type: "image_url", image_url: { url: "https://example.com/x.png" } },
      { type: "image", mimeType: "image/png" },
    ];
    expect(attachmentsOf(content)).toEqual([
      png,
      pdf,
      { kind: "image", mimeType: "image/jpeg", data: "/9j/" },
      { kind: "image", mimeType: "image/webp", data: "UklGRg==" },
    ]);
    expect(attachmentsOf("plain text")).toEqual([]);
  });

  it("rebuilds a turn's attachments from thread state, and an image-only question has no text", () => {
    const [t1, t2] = turnsFromMessages([
      {
        type: "human",
        id: "h1",
        content: humanInput("What does this chart say?", "h1", [png]).messages[0].content,
      },
      { type: "ai", id: "a1", content: "Sales rose." },
      { type: "human", id: "h2", content: [toContentBlock(pdf)] },
      { type: "ai", id: "a2", content: "The report says so." },
    ]);
    expect(t1).toMatchObject({ question: "What does this chart say?", attachments: [png], status: "done" });
    expect(t2).toMatchObject({ question: "", attachments: [pdf], answer: "The report says so." });
  });

  it("shows the attachments in the live turn from the moment it is asked, and keeps them on a replay", () => {
    let s = chatReducer(EMPTY_CHAT, { type: "submitted", key: "k", question: "Why?", attachments: [png] });
    expect(s.turns[0].attachments).toEqual([png]);
    s = chatReducer(s, { type: "resumed" });
    expect(s.turns[0].attachments).toEqual([png]);
  });
});

describe("upload and attachment errors in the server's words", () => {
  const http = (status: number, body: object) =>
    Object.assign(new Error(`HTTP ${status}: ${JSON.stringify(body)}`), { status });

  it.each([
    [
      400,
      "bad_request:upload",
      "sales.csv line 3 has 5 fields; the header has 4. Fix the line or save it again.",
    ],
    [413, "payload_too_large:upload", "sales.csv has 120 columns; at most 100 (QUARRY_UPLOAD_MAX_COLUMNS)."],
    [409, "conflict:upload", "This conversation already has a file named sales; delete it first."],
    [404, "not_found:upload", "This conversation has no file named sales."],
    [503, "unavailable:uploads", "Uploads need QUARRY_BQ_UPLOADS_DATASET on this deployment."],
    [
      400,
      "bad_request:attachment",
      "content[1] is image/svg+xml; send PNG, JPEG, GIF or WebP images and PDF files.",
    ],
    [413, "payload_too_large:attachment", "content[1] is 12.0 MB; an attachment may be at most 10 MB."],
    [422, "model:unsupported_input", "The model (QUARRY_MODEL=llama3) does not take images."],
  ])("%i %s is shown as written", (status, error, message) => {
    expect(errorInWords(http(status, { error, message }))).toBe(message);
    // The same in an in-band error event.
    expect(errorInWords({ error, message })).toBe(message);
  });

  it("shows the page's own refusal of a file (before sending) as it is", () => {
    const plan = uploadPlan({ name: "huge.csv", size: 60 * MIB }, 50);
    if (plan.ok) throw new Error("a 60 MB file must be refused");
    expect(errorInWords(new Error(plan.error))).toBe(plan.error);
  });

  it("keeps the generic words for the conversation's own 404/409/413", () => {
    expect(errorInWords(http(404, { error: "not_found:thread", message: "x" }))).toMatch(/Start a new one/);
    expect(errorInWords(http(409, { error: "conflict:run", message: "busy" }))).toMatch(/press Stop/);
    expect(errorInWords(http(413, { error: "payload_too_large:body", message: "x" }))).toMatch(/too long/);
  });
});
