/**
 * `POST /chat/events` (a Google Chat HTTP endpoint app): verified (chat/google/verify.ts), then a
 * message from a person is recorded once by its message name, queued on `chatRun`, and answered at
 * once with a short placeholder in its thread (Chat waits at most 30 s); the answer follows from
 * the task. An unlinked person gets the connect link instead (privately in a space), and nothing
 * runs — unless their Workspace email may be trusted (trusted.ts), which links them at once. Other events (added or removed from a space, a bot's message) are acknowledged, logged
 * once, nothing stored.
 */
import type { Request, Response } from "express";
import * as logger from "firebase-functions/logger";
import { config } from "../../config";
import { QuarryError } from "../../errors";
import { appUrl } from "../../runs/page-links";
import { signLinkToken } from "../link-token";
import { enqueueChatRun } from "../queue";
import { forgetEvent, linkOf, recordEventOnce } from "../store";
import { questionOf, userKeyOf, type ChatEvent, type GoogleChatQuestion } from "./question";
import { trustedLink } from "./trusted";
import { verifyChatRequest } from "./verify";

/** The connect link, as the synchronous reply (private to the asker in a space). */
function connectReply(q: GoogleChatQuestion) {
  const { linkKey, linkMinutes } = config().chat;
  const token = signLinkToken(linkKey!, userKeyOf(q.user), Date.now() + linkMinutes * 60_000);
  const url = `${appUrl().replace(/\/+$/, "")}/connect?token=${encodeURIComponent(token)}`;
  return {
    text: `Connect your Quarry account to ask questions here: ${url} (the link works for ${linkMinutes} minutes).`,
    ...(q.direct ? {} : { privateMessageViewer: { name: q.user } }),
  };
}

export async function googleChatEvent(req: Request, res: Response): Promise<void> {
  const { enabled, problem } = config().chat.google;
  if (!enabled || problem) {
    throw new QuarryError(
      "unavailable:chat",
      problem ?? "The Google Chat app is not turned on here: set QUARRY_GOOGLE_CHAT=true.",
    );
  }
  await verifyChatRequest(req.get("authorization"));
  const event = (req.body ?? {}) as ChatEvent;
  if (event.type === "CARD_CLICKED") {
    const { cardClicked } = await import("./clicks.js");
    res.json(await cardClicked(event));
    return;
  }
  const q = questionOf(event);
  if (typeof q === "string") {
    logger.info("google chat event ignored", { why: q });
    res.json({});
    return;
  }
  const key = userKeyOf(q.user);
  if (!(await linkOf(key)) && !(await trustedLink(event, key))) {
    res.json(connectReply(q));
    return;
  }
  if (!(await recordEventOnce(`google_chat:${q.message}`, { platform: "google_chat" }))) {
    logger.info("google chat event already taken (a retry)", { message: q.message });
    res.json({});
    return;
  }
  await enqueueChatRun({ platform: "google_chat", question: q }).catch(async (err: unknown) => {
    await forgetEvent(`google_chat:${q.message}`).catch(() => {});
    throw new QuarryError("unavailable:chat", "The question could not be queued: send it again.", {
      cause: err,
    });
  });
  res.json({ text: "Working on it…", ...(q.direct ? {} : { privateMessageViewer: { name: q.user } }) });
}
