/**
 * A minimal PNG reader for tests (8-bit RGB/RGBA, non-interlaced — what resvg writes): checks the
 * signature, reads IHDR, inflates IDAT and undoes the row filters, so a test can look at pixels.
 */
import { inflateSync } from "node:zlib";

export interface Png {
  width: number;
  height: number;
  channels: number;
  pixels: Uint8Array;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

function unfilter(data: Buffer, width: number, height: number, bpp: number): Uint8Array {
  const stride = width * bpp;
  const out = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = data[y * (stride + 1)];
    const row = data.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= bpp ? out[y * stride + x - bpp] : 0;
      const b = y > 0 ? out[(y - 1) * stride + x] : 0;
      const c = x >= bpp && y > 0 ? out[(y - 1) * stride + x - bpp] : 0;
      const add = [0, a, b, (a + b) >> 1, paeth(a, b, c)][filter];
      if (add === undefined) throw new Error(`PNG row ${y}: unknown filter ${filter}`);
      out[y * stride + x] = (row[x] + add) & 0xff;
    }
  }
  return out;
}

/** Decodes a PNG; throws when it is not one this reader takes. */
export function readPng(bytes: Buffer): Png {
  if (!bytes.subarray(0, 8).equals(SIGNATURE)) throw new Error("not a PNG (bad signature)");
  let offset = 8;
  let header: { width: number; height: number; depth: number; colour: number; interlace: number } | undefined;
  const idat: Buffer[] = [];
  while (offset < bytes.length) {
    const length = bytes.readUInt32BE(offset);
    const type = bytes.toString("latin1", offset + 4, offset + 8);
    const data = bytes.subarray(offset + 8, offset + 8 + length);
    if (type === "IHDR") {
      header = {
        width: data.readUInt32BE(0),
        height: data.readUInt32BE(4),
        depth: data[8],
        colour: data[9],
        interlace: data[12],
      };
    } else if (type === "IDAT") idat.push(data);
    else if (type === "IEND") break;
    offset += 12 + length;
  }
  if (!header) throw new Error("PNG without IHDR");
  const channels = { 2: 3, 6: 4 }[header.colour];
  if (header.depth !== 8 || !channels || header.interlace !== 0)
    throw new Error(`PNG kind not supported here: ${JSON.stringify(header)}`);
  const pixels = unfilter(inflateSync(Buffer.concat(idat)), header.width, header.height, channels);
  return { width: header.width, height: header.height, channels, pixels };
}

/** Pixels darker than `threshold` (0–255, mean of RGB) in the rectangle. */
export function darkPixels(
  png: Png,
  rect = { x: 0, y: 0, w: png.width, h: png.height },
  threshold = 128,
): number {
  let n = 0;
  for (let y = rect.y; y < rect.y + rect.h; y++) {
    for (let x = rect.x; x < rect.x + rect.w; x++) {
      const i = (y * png.width + x) * png.channels;
      if ((png.pixels[i] + png.pixels[i + 1] + png.pixels[i + 2]) / 3 < threshold) n++;
    }
  }
  return n;
}
