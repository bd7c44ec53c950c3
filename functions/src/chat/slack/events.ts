/**
 * `POST /slack/events` (the Events API): verified (signature and age), the URL check answered,
 * a question recorded once by its `event_id` (Slack retries after 3 s, 1 min and 5 min) and queued
 * on `chatRun`, then 200 at once. Events that are not questions (bots, Quarry itself, edits, channel
 * chatter, unknown types) are acknowledged and logged once with why; nothing is stored for them.
 */
import type { Request, Response } from "express";
import * as logger from "firebase-functions/logger";
import { QuarryError } from "../../errors";
import { enqueueChatRun } from "../queue";
import { forgetEvent, recordEventOnce } from "../store";
import { classifySlackEvent } from "./classify";
import { assertSlackConfigured } from "./client";
import { verifySlackRequest } from "./verify";

/** The body exactly as the platform sent it (signatures are over these bytes). */
function rawBodyOf(req: Request): Buffer | undefined {
  return (req as Request & { rawBody?: Buffer }).rawBody;
}

/** Verifies a request as Slack's (401 otherwise) and returns its raw body. */
export function verifiedSlackBody(req: Request): Buffer {
  const { signingSecret } = assertSlackConfigured();
  const raw = rawBodyOf(req);
  verifySlackRequest(
    signingSecret,
    { signature: req.get("x-slack-signature"), timestamp: req.get("x-slack-request-timestamp") },
    raw,
    Date.now(),
  );
  return raw!;
}

function parseJson(raw: Buffer): Record<string, unknown> {
  try {
    const body = JSON.parse(raw.toString("utf8")) as unknown;
    if (body && typeof body === "object") return body as Record<string, unknown>;
  } catch {
    // worded below
  }
  throw new QuarryError("bad_request:body", "A Slack event must be a JSON object.");
}

export async function slackEvent(req: Request, res: Response): Promise<void> {
  const body = parseJson(verifiedSlackBody(req));
  if (body.type === "url_verification") {
    res.json({ challenge: body.challenge });
    return;
  }
  if (body.type !== "event_callback") {
    logger.info("slack request ignored", { type: String(body.type) });
    res.status(200).end();
    return;
  }
  const classified = classifySlackEvent(body);
  if ("ignored" in classified) {
    logger.info("slack event ignored", { eventId: String(body.event_id), why: classified.ignored });
    res.status(200).end();
    return;
  }
  const q = classified.question;
  if (!(await recordEventOnce(`slack:${q.eventId}`, { platform: "slack", team: q.team }))) {
    logger.info("slack event already taken (a retry)", { eventId: q.eventId });
    res.status(200).end();
    return;
  }
  await enqueueChatRun({ platform: "slack", question: q }).catch(async (err: unknown) => {
    // Not queued: forgotten, so Slack's retry (after our 503) is taken.
    await forgetEvent(`slack:${q.eventId}`).catch(() => {});
    throw new QuarryError("unavailable:chat", "The question could not be queued: Slack will send it again.", {
      cause: err,
    });
  });
  res.status(200).end();
}
