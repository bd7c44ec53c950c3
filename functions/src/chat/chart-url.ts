/**
 * Charts for chat apps that show images by URL (Google Chat's card image): the PNG is kept
 * server-only for a day (`chatCharts`, TTL on `expireAt`) and served by Quarry itself at
 * `GET /chat/charts/<id>.png?exp=<ms>&sig=<mac>`, where the MAC (HMAC-SHA256 with
 * QUARRY_CHAT_LINK_KEY) covers the id and the expiry: the URL is unguessable, cannot be stretched,
 * and stops working when it expires. Nothing else is served from there.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Request, Response } from "express";
import { config } from "../config";
import { QuarryError } from "../errors";
import { firestore } from "../services";

const CHARTS = "chatCharts";
/** How long a chart's URL works (chat clients fetch the image when they show the message). */
const CHART_URL_MS = 24 * 3_600_000;

const mac = (key: string, id: string, exp: number) =>
  createHmac("sha256", key).update(`chart:${id}:${exp}`).digest("base64url");

function linkKey(): string {
  const key = config().chat.linkKey;
  if (!key)
    throw new QuarryError(
      "unavailable:chat",
      "Chat charts are not configured here: set QUARRY_CHAT_LINK_KEY.",
    );
  return key;
}

/** Keeps `png` and returns its signed, expiring URL. */
export async function chartUrl(png: Buffer, uid: string): Promise<string> {
  const id = randomBytes(16).toString("hex");
  const exp = Date.now() + CHART_URL_MS;
  const { Timestamp } = await import("firebase-admin/firestore");
  await (
    await firestore()
  )
    .collection(CHARTS)
    .doc(id)
    .set({ png, uid, expireAt: Timestamp.fromMillis(exp) });
  const base = config().apiUrl.replace(/\/+$/, "");
  return `${base}/chat/charts/${id}.png?exp=${exp}&sig=${mac(linkKey(), id, exp)}`;
}

const refuse = () =>
  new QuarryError(
    "unauthorized:chat_signature",
    "This chart link is not valid or has expired: ask again in the chat.",
  );

/** `GET /chat/charts/:file`: the PNG, when the signature and expiry check out (401 otherwise). */
export async function serveChart(req: Request, res: Response): Promise<void> {
  const id = /^([a-f0-9]{32})\.png$/.exec(String(req.params.file))?.[1];
  const exp = Number(req.query.exp);
  const sig = typeof req.query.sig === "string" ? req.query.sig : "";
  if (!id || !Number.isSafeInteger(exp) || exp < Date.now()) throw refuse();
  const expected = Buffer.from(mac(linkKey(), id, exp));
  if (sig.length !== expected.length || !timingSafeEqual(Buffer.from(sig), expected)) throw refuse();
  const snap = await (await firestore()).collection(CHARTS).doc(id).get();
  if (!snap.exists) throw refuse();
  const png = snap.get("png") as Buffer;
  res
    .status(200)
    .set({ "content-type": "image/png", "cache-control": "private, max-age=3600" })
    .send(Buffer.from(png));
}
