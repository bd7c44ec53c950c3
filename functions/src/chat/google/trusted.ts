/**
 * Linking by Workspace email (QUARRY_GOOGLE_CHAT_TRUSTED_DOMAINS): Google Chat names the person who
 * sent a message by their Workspace email, in an event whose bearer token was verified as Chat's.
 * For a domain an admin listed, that person is linked to the Quarry account with the same email —
 * only an account whose email is verified and that is not disabled (an unverified address proves
 * nothing: anyone could have signed up with it). Everyone else gets the connect link, as without
 * the setting.
 */
import * as logger from "firebase-functions/logger";
import { config } from "../../config";
import { adminAuth } from "../../services";
import { storeLink, type ChatLink } from "../store";
import type { ChatEvent } from "./question";

/** The link made from the event's email, or undefined when it may not be trusted. */
export async function trustedLink(e: ChatEvent, user: string): Promise<ChatLink | undefined> {
  const domains = config().chat.google.trustedDomains;
  const email = e.user?.email?.trim().toLowerCase();
  if (!domains.length || !email || e.user?.type !== "HUMAN") return undefined;
  const domain = email.slice(email.lastIndexOf("@") + 1);
  if (!email.includes("@") || !domains.includes(domain)) return undefined;
  const account = await (await adminAuth()).getUserByEmail(email).catch((err: { code?: string }) => {
    if (err.code === "auth/user-not-found") return undefined;
    throw err;
  });
  if (!account || account.disabled || !account.emailVerified) {
    logger.info("google chat: a trusted domain's person has no verified account yet", { domain });
    return undefined;
  }
  const link: ChatLink = { uid: account.uid, email, emailVerified: true, platform: "google_chat" };
  await storeLink(user, { ...link, trusted: "workspace_email" });
  return link;
}
