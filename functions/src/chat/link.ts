/**
 * `POST /chat/link` with `{ token }`: the page, signed in, hands back a connect link's token; once
 * its signature and expiry check out, the chat user it names is linked to the caller (who passed
 * the access gate, so is a member). From then on that chat user's questions run as this member.
 */
import type { Request, Response } from "express";
import { z } from "zod";
import { config } from "../config";
import { QuarryError } from "../errors";
import { callerOf } from "../access/caller";
import { parse } from "../runs/schemas";
import { verifyLinkToken } from "./link-token";
import { storeLink } from "./store";

const LinkBody = z.strictObject({ token: z.string().min(1).max(2000) });

export async function linkChatUser(req: Request, res: Response): Promise<void> {
  const caller = callerOf(req);
  const { token } = parse(LinkBody, req.body ?? {}, "body");
  const key = config().chat.linkKey;
  if (!key) {
    throw new QuarryError(
      "unavailable:chat",
      "Chat links are not configured here: set QUARRY_CHAT_LINK_KEY.",
    );
  }
  const user = verifyLinkToken(key, token, Date.now());
  const platform = user.startsWith("slack:") ? "slack" : "google_chat";
  await storeLink(user, {
    uid: caller.uid,
    email: caller.email ?? null,
    emailVerified: caller.emailVerified,
    platform,
  });
  res.status(201).json({ linked: true, platform });
}
