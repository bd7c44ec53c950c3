/**
 * Images and PDFs in a question, in Chromium against the whole local stack (the Gemini Developer
 * API stand-in records what the model is sent): attached with the paperclip's file input, an image
 * and a PDF reach the model as `inlineData`, the question shows the image's thumbnail and the
 * PDF's chip, and both are still there after a reload (rebuilt from the thread's state). A
 * 4000×3000 image is scaled down in the page: the model receives a JPEG of at most 2048 px.
 */
import { deflateSync, crc32 } from "node:zlib";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { launchBrowser, reportFailure, screenshot } from "../support/browser";
import { stackEnv } from "../support/stack-env";
import { HOLD_URL_ENV, holdClient, type Holds } from "../support/hold-control";

let browser: Browser;
let web: string;
let holds: Holds;
let context: BrowserContext;
let page: Page;

/** A real PNG (RGB, one colour per row band), so the browser decodes it as any image. */
function png(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const row = 1 + width * 3;
  const raw = Buffer.alloc(row * height);
  for (let y = 0; y < height; y++) {
    const band = Math.floor((y * 8) / height);
    for (let x = 0; x < width; x++) raw.set([30 * band, 200 - 20 * band, 120], y * row + 1 + x * 3);
  }
  return Buffer.concat([
    Buffer.from("89504e470d0a1a0a", "hex"),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(raw)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

const PDF = Buffer.from(
  "%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\n" +
    "trailer<</Root 1 0 R>>\n%%EOF\n",
);

/** Width and height from a PNG's IHDR or a JPEG's start-of-frame marker. */
function dimensions(bytes: Buffer): { width: number; height: number } {
  if (bytes.subarray(1, 4).toString("ascii") === "PNG")
    return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
  let i = 2;
  while (i < bytes.length) {
    const marker = bytes[i + 1];
    if (marker >= 0xc0 && marker <= 0xc2)
      return { height: bytes.readUInt16BE(i + 5), width: bytes.readUInt16BE(i + 7) };
    i += 2 + bytes.readUInt16BE(i + 2);
  }
  throw new Error("no JPEG frame header");
}

/** Every `inlineData` part of the model requests that carried `marker`. */
async function inlineParts(marker: string): Promise<{ mimeType: string; data: string }[]> {
  const found: { mimeType: string; data: string }[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) return v.forEach(walk);
    if (!v || typeof v !== "object") return;
    const o = v as Record<string, unknown>;
    if (o.inlineData) found.push(o.inlineData as { mimeType: string; data: string });
    Object.values(o).forEach(walk);
  };
  for (const p of await holds.prompts(marker)) walk(JSON.parse(p));
  return found;
}

async function signIn(p: Page) {
  await p.goto(web);
  await p.getByRole("button", { name: "Continue as test user" }).click();
  await p.getByRole("button", { name: "+ New conversation" }).waitFor();
}

/** Attaches files through the paperclip's file input, waits for their chips, then asks. */
async function askWith(
  p: Page,
  question: string,
  files: { name: string; mimeType: string; buffer: Buffer }[],
) {
  await p.locator("#attach-files").setInputFiles(files);
  const chips = p.getByRole("list", { name: "Attachments of the next question" }).getByRole("listitem");
  await expect.poll(() => chips.count()).toBe(files.length);
  const box = p.getByLabel("Your question");
  await box.fill(question);
  await box.press("Enter");
  await p.waitForURL(/\/t\/[0-9a-f-]{36}$/);
  await p.locator('article.turn[data-status="done"]').waitFor({ timeout: 60_000 });
}

beforeAll(async () => {
  web = stackEnv().urls.web!;
  holds = holdClient(stackEnv().env[HOLD_URL_ENV]);
  browser = await launchBrowser();
});

beforeEach(async () => {
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") console.log(`[page ${m.type()}] ${m.text()}`);
  });
  page.on("pageerror", (e) => console.log(`[page error] ${e.message}`));
});

afterEach(async (ctx) => {
  await reportFailure(page, ctx.task);
  await context?.close();
});

afterAll(async () => {
  await browser?.close();
});

describe("images and PDFs in a question", () => {
  it("an attached image and PDF reach the model and show in the question, also after a reload", async () => {
    await signIn(page);
    const marker = holds.newKey("image");
    const image = png(64, 48);
    await askWith(page, `How many orders were placed? ${marker}`, [
      { name: "chart.png", mimeType: "image/png", buffer: image },
      { name: "report.pdf", mimeType: "application/pdf", buffer: PDF },
    ]);
    const parts = await inlineParts(marker);
    // A small image goes as it is: the model sees the very bytes.
    expect(parts).toContainEqual({ mimeType: "image/png", data: image.toString("base64") });
    expect(parts).toContainEqual({ mimeType: "application/pdf", data: PDF.toString("base64") });

    const shown = async () => {
      const question = page.locator("article.turn .question").first();
      const thumb = question.getByRole("img", { name: "chart.png" });
      await thumb.waitFor();
      expect(await thumb.getAttribute("src")).toBe(`data:image/png;base64,${image.toString("base64")}`);
      // The thumbnail is drawn (the page's CSP lets data: images show).
      await expect.poll(() => thumb.evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBe(64);
      await question.getByText("PDF report.pdf").waitFor();
    };
    await shown();
    // The box is empty again: the attachments went with the question.
    await expect(page.getByRole("list", { name: "Attachments of the next question" }).count()).resolves.toBe(
      0,
    );
    await screenshot(page, "attachments-01-asked");
    await page.reload();
    await page.locator('article.turn[data-status="done"]').waitFor();
    await shown();
  });

  it("a 4000×3000 image is scaled down in the page: the model receives at most 2048 px", async () => {
    await signIn(page);
    const marker = holds.newKey("big-image");
    await askWith(page, `How many orders were placed? ${marker}`, [
      { name: "photo.png", mimeType: "image/png", buffer: png(4000, 3000) },
    ]);
    const [part] = await inlineParts(marker);
    // Opaque, so re-encoded as JPEG.
    expect(part.mimeType).toBe("image/jpeg");
    expect(dimensions(Buffer.from(part.data, "base64"))).toEqual({ width: 2048, height: 1536 });
    const thumb = page.locator("article.turn .question").getByRole("img", { name: "photo.jpg" });
    await expect.poll(() => thumb.evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBe(2048);
  });

  it("refuses a file that is neither an image, a PDF nor a table, in words", async () => {
    await signIn(page);
    await page
      .locator("#attach-files")
      .setInputFiles([
        { name: "notes.docx", mimeType: "application/octet-stream", buffer: Buffer.from("PK") },
      ]);
    await page.getByRole("alert").filter({ hasText: "notes.docx is neither an image" }).waitFor();
  });
});
