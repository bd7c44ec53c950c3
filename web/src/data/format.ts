/** Numbers, bytes and errors in words for the page. */

import { areaOf } from "@quarry/functions/contract";

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/** Bytes in binary units, as BigQuery bills them: "0 B", "12.5 MiB", "1.02 TiB". */
export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) return "—";
  let v = Math.max(0, bytes);
  let i = 0;
  while (v >= 1024 && i < UNITS.length - 1) {
    v /= 1024;
    i++;
  }
  const digits = i === 0 ? 0 : v < 10 ? 2 : v < 100 ? 1 : 0;
  return `${v.toFixed(digits)} ${UNITS[i]}`;
}

/** An integer with thousands separators ("12,345"). */
export function formatCount(n: number): string {
  return new Intl.NumberFormat("en-US").format(n);
}

/** An error as the API sends it: `{ error, message }` (HTTP body or in-band `error` event). */
interface ApiErrorBody {
  error?: string;
  message?: string;
}

/** Pulls `{error, message}` out of an SDK HTTPError ("HTTP 409: {...}") or an error event. */
export function parseApiError(err: unknown): { status?: number; code?: string; message: string } {
  if (typeof err === "object" && err !== null && !(err instanceof Error)) {
    const body = err as ApiErrorBody;
    if (typeof body.message === "string" || typeof body.error === "string") {
      return { code: body.error, message: body.message ?? body.error ?? "" };
    }
  }
  const e = err as { status?: unknown; message?: unknown; name?: unknown };
  const status = typeof e?.status === "number" ? e.status : undefined;
  const raw = typeof e?.message === "string" ? e.message : String(err);
  const json = raw.replace(/^HTTP \d+:\s*/, "");
  try {
    const body = JSON.parse(json) as ApiErrorBody;
    if (body && (body.message || body.error))
      return { status, code: body.error, message: body.message ?? body.error ?? raw };
  } catch {
    /* not JSON: keep the raw text */
  }
  return { status, message: json };
}

/** Codes (`area:<subject>`) whose message is shown as the server wrote it, whatever their status. */
const OWN_WORDS = new Set(["upload", "uploads", "attachment", "schedule"]);

/**
 * An error in words that say what to do. The server's own message is kept when it explains the
 * problem (it is written for people); transport failures get advice.
 */
export function errorInWords(err: unknown): string {
  const name = (err as { name?: unknown })?.name;
  if (name === "AbortError") return "Stopped.";
  const { status, code, message } = parseApiError(err);
  const prefix = areaOf(code);
  // Model failures (no model, bad key, quota, unknown model, safety, the model service down) come
  // with a message written to say what to change: it is shown as it is.
  // So do quota refusals: what was used, the limit and when it resets.
  // And BigQuery consent (user identity mode): the message says to click Connect BigQuery.
  if ((prefix === "model" || prefix === "quota" || prefix === "auth") && message) return message;
  // Files, images and schedules: the message names the file, line, cell, field or setting — a
  // 404/409/413 about them is not about the conversation or the question's length.
  const subject = code?.split(":")[1];
  if (subject && OWN_WORDS.has(subject) && message) return message;
  if (status === 401 || prefix === "unauthorized") {
    return "Your sign-in has expired. Sign out and sign in again, then resend your question.";
  }
  if (status === 404 || prefix === "not_found") {
    return "This conversation no longer exists (it may have been deleted in another tab). Start a new one.";
  }
  if (status === 409 || prefix === "conflict") {
    return "This conversation is still answering a previous question. Wait for it to finish or press Stop, then try again.";
  }
  if (status === 413 || prefix === "payload_too_large")
    return "Your message is too long. Shorten it and send it again.";
  if (status === 429) {
    return "Too many requests right now. Wait a minute and try again.";
  }
  if (/Failed to fetch|NetworkError|Load failed|ECONNREFUSED|network/i.test(message)) {
    return "Quarry's server could not be reached. Check your connection and try again.";
  }
  if (status !== undefined && status >= 400 && status < 500 && message) return message;
  if (prefix === "internal" || (status !== undefined && status >= 500)) {
    return `Something went wrong on the server${message && prefix !== "internal" ? ` (${message})` : ""}. Try again; if it keeps happening, start a new conversation.`;
  }
  return message || "Something went wrong. Try again.";
}
