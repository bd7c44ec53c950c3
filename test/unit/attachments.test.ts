/**
 * Images and PDFs in a question (functions/src/runs/attachments.ts): the three forms LangChain's
 * clients send become standard blocks; what is not a PNG, JPEG, GIF, WebP or PDF — by its type or
 * by its bytes — a URL to fetch, too many or too big is refused with what to send instead.
 */
import { describe, it, expect } from "vitest";
import { checkAttachments } from "../../functions/src/runs/attachments";
import { MAX_ATTACHMENTS } from "../../functions/src/contract/limits";
import { QuarryError } from "../../functions/src/errors";

const PNG = Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), Buffer.alloc(64, 7)]).toString("base64");
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(64, 1)]).toString("base64");
const PDF = Buffer.from("%PDF-1.7\n1 0 obj\n<<>>\nendobj\n").toString("base64");
const text = { type: "text", text: "Make me this for Q3" };

function refusal(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(QuarryError);
    return { code: (err as QuarryError).code, message: (err as Error).message };
  }
  throw new Error("not refused");
}

describe("attachments in a question", () => {
  it("takes agent-chat-ui's blocks, the older base64 blocks and OpenAI's data URLs, as standard blocks", () => {
    const out = checkAttachments(
      [
        text,
        { type: "image", mimeType: "image/png", data: PNG, metadata: { name: "q2.png", secret: "x" } },
        { type: "image", source_type: "base64", mime_type: "image/jpeg", data: JPEG },
        { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
        { type: "file", mimeType: "application/pdf", data: PDF, metadata: { filename: "report.pdf" } },
      ],
      10,
    );
    expect(out).toEqual([
      text,
      { type: "image", mimeType: "image/png", data: PNG, metadata: { name: "q2.png" } },
      { type: "image", mimeType: "image/jpeg", data: JPEG },
      { type: "image", mimeType: "image/png", data: PNG },
      { type: "file", mimeType: "application/pdf", data: PDF, metadata: { filename: "report.pdf" } },
    ]);
    expect(
      (out as { type: string; mimeType?: string }[]).filter((b) => b.type !== "text").map((b) => b.mimeType),
    ).toEqual(["image/png", "image/jpeg", "image/png", "application/pdf"]);
    expect(checkAttachments("just words", 10)).toBe("just words");
  });

  it("refuses a type it does not take, and bytes that are not what the type says", () => {
    const svg = refusal(() =>
      checkAttachments([{ type: "image", mimeType: "image/svg+xml", data: PNG }], 10),
    );
    expect(svg).toEqual({
      code: "bad_request:attachment",
      message: expect.stringMatching(/image\/svg\+xml.*PNG, JPEG/),
    });
    const lying = refusal(() => checkAttachments([{ type: "image", mimeType: "image/png", data: JPEG }], 10));
    expect(lying.message).toMatch(/says it is image\/png, but its bytes are not/);
    const notBase64 = refusal(() =>
      checkAttachments([{ type: "file", mimeType: "application/pdf", data: "%PDF-1.7" }], 10),
    );
    expect(notBase64.message).toMatch(/not base64/);
    const audio = refusal(() => checkAttachments([{ type: "audio", mimeType: "audio/wav", data: PNG }], 10));
    expect(audio.message).toMatch(/"audio" block/);
  });

  it("never fetches a URL", () => {
    for (const block of [
      { type: "image", url: "https://example.com/a.png", mimeType: "image/png" },
      { type: "image", source_type: "url", url: "http://169.254.169.254/latest" },
      { type: "image_url", image_url: "https://example.com/b.png" },
    ]) {
      expect(refusal(() => checkAttachments([block], 10)).message).toMatch(
        /does not fetch files from the web/,
      );
    }
  });

  it("refuses more than the limit per question, and a file over QUARRY_ATTACHMENT_MAX_MB, before decoding it", () => {
    const many = Array.from({ length: MAX_ATTACHMENTS + 1 }, () => ({
      type: "image",
      mimeType: "image/png",
      data: PNG,
    }));
    expect(refusal(() => checkAttachments(many, 10)).message).toMatch(`at most ${MAX_ATTACHMENTS}`);
    const big = Buffer.concat([
      Buffer.from("89504e470d0a1a0a", "hex"),
      Buffer.alloc(1024 * 1024 + 1),
    ]).toString("base64");
    const tooBig = refusal(() => checkAttachments([{ type: "image", mimeType: "image/png", data: big }], 1));
    expect(tooBig).toEqual({
      code: "payload_too_large:attachment",
      message: expect.stringMatching(/1\.0 MB.*at most 1 MB/),
    });
    expect(checkAttachments([{ type: "image", mimeType: "image/png", data: big }], 2)).toHaveLength(1);
  });
});
