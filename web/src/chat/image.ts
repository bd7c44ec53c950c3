/**
 * An image or PDF the person attaches, read in the browser into what the question carries: images
 * larger than {@link MAX_IMAGE_SIDE} or the attachment limit are drawn smaller on a canvas and
 * re-encoded (the maths in `data/attachments.ts`), so a phone photo costs ~0.5 MB, not 8.
 */
import {
  attachmentTooLarge,
  fileKind,
  imagePlan,
  shrinkToFit,
  unsupportedFile,
  type Attachment,
} from "../data/attachments";

const MIB = 1024 * 1024;
/** Re-encodings tried before an image is given up on as too large. */
const ENCODE_TRIES = 4;

/** A blob's bytes as base64, without the `data:` prefix. */
function toBase64(blob: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ""));
    reader.onerror = () => reject(reader.error ?? new Error("The file could not be read."));
    reader.readAsDataURL(blob);
  });
}

function draw(bitmap: ImageBitmap, width: number, height: number): HTMLCanvasElement {
  const canvas = document.createElement("canvas");
  canvas.width = width;
  canvas.height = height;
  canvas.getContext("2d")!.drawImage(bitmap, 0, 0, width, height);
  return canvas;
}

/** Whether any pixel of the drawn image is not fully opaque (then it stays PNG). */
function hasTransparency(canvas: HTMLCanvasElement): boolean {
  const { data } = canvas.getContext("2d")!.getImageData(0, 0, canvas.width, canvas.height);
  for (let i = 3; i < data.length; i += 4) if (data[i] < 255) return true;
  return false;
}

function encode(canvas: HTMLCanvasElement, type: string, quality?: number): Promise<Blob> {
  return new Promise((resolve, reject) =>
    canvas.toBlob(
      (b) => (b ? resolve(b) : reject(new Error("The image could not be encoded."))),
      type,
      quality,
    ),
  );
}

/** An image as sent: itself when it fits, else scaled down and re-encoded until it fits. */
async function readImage(file: File, maxBytes: number, maxMb: number): Promise<Attachment> {
  let bitmap: ImageBitmap;
  try {
    bitmap = await createImageBitmap(file);
  } catch {
    throw new Error(`${file.name} could not be read as an image. Send a PNG, JPEG, GIF or WebP file.`);
  }
  try {
    const opaque = { width: bitmap.width, height: bitmap.height, bytes: file.size, transparent: false };
    const first = imagePlan(opaque, maxBytes);
    if (!first.reencode) {
      // A file without a type was recognised by its extension (fileKind).
      const ext = /\.(\w+)$/.exec(file.name.toLowerCase())?.[1];
      const mimeType = file.type || (ext === "jpg" ? "image/jpeg" : `image/${ext}`);
      return { kind: "image", mimeType, name: file.name, data: await toBase64(file) };
    }
    let { width, height } = first;
    let canvas = draw(bitmap, width, height);
    const mayHaveAlpha = file.type !== "image/jpeg";
    const plan = imagePlan({ ...opaque, transparent: mayHaveAlpha && hasTransparency(canvas) }, maxBytes);
    if (!plan.reencode) throw new Error("unreachable: the first plan re-encodes");
    for (let i = 0; i < ENCODE_TRIES; i++) {
      const blob = await encode(canvas, plan.mimeType, plan.quality);
      if (blob.size <= maxBytes) {
        const name = file.name.replace(/\.[^.]*$/, "") + (plan.mimeType === "image/png" ? ".png" : ".jpg");
        return { kind: "image", mimeType: plan.mimeType, name, data: await toBase64(blob) };
      }
      ({ width, height } = shrinkToFit(width, height, blob.size, maxBytes));
      canvas = draw(bitmap, width, height);
    }
    throw new Error(attachmentTooLarge(file.name, file.size, maxMb));
  } finally {
    bitmap.close();
  }
}

/**
 * A picked, dropped or pasted image or PDF as an attachment of the next question; throws an Error
 * whose message says what to send instead (a PDF over the limit is refused here, unread).
 */
export async function readAttachment(file: File, maxMb: number): Promise<Attachment> {
  const kind = fileKind(file);
  const maxBytes = maxMb * MIB;
  if (kind === "pdf") {
    if (file.size > maxBytes) throw new Error(attachmentTooLarge(file.name, file.size, maxMb));
    return { kind: "pdf", mimeType: "application/pdf", name: file.name, data: await toBase64(file) };
  }
  if (kind === "image") return readImage(file, maxBytes, maxMb);
  throw new Error(unsupportedFile(file.name));
}
