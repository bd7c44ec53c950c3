/**
 * The chat channels (functions/src/chat, docs/chat.md): the Slack app's bot token and signing
 * secret, where its Web API is, and the key that signs "Connect your Quarry account" links. Off
 * unless `QUARRY_SLACK=true`; turned on without its secrets, the Slack routes refuse every request
 * with a message naming what to set (fail closed).
 */
import { docsOf, flag, int, text, textOr, type Env } from "./define";

export interface ChatConfig {
  slack: {
    /** Whether `/slack/events` and `/slack/interactions` serve (QUARRY_SLACK). */
    enabled: boolean;
    botToken?: string;
    signingSecret?: string;
    /** The Web API's base URL (a stand-in's in tests). */
    apiUrl: string;
  };
  /** The key that signs connect links (QUARRY_CHAT_LINK_KEY). */
  linkKey?: string;
  /** How long a connect link works, minutes. */
  linkMinutes: number;
  /** Why the Slack app cannot serve (a missing setting), in words that name what to set. */
  problem?: string;
}

const concern = "chat";

const CHAT_SETTINGS = {
  slack: flag("QUARRY_SLACK", {
    concern,
    default: false,
    description:
      "Serve the Slack app ([Chat](chat.md)): `/slack/events` and `/slack/interactions` on the `api` function, and the `chatRun` task queue. Deploy-time too: mounts the Slack secrets.",
  }),
  botToken: text("QUARRY_SLACK_BOT_TOKEN", {
    concern,
    description:
      "The Slack app's bot token (`xoxb-…`, from OAuth & Permissions after installing the app); a Secret Manager secret. Required with `QUARRY_SLACK=true`.",
  }),
  signingSecret: text("QUARRY_SLACK_SIGNING_SECRET", {
    concern,
    description:
      "The Slack app's signing secret (Basic Information → App Credentials): every request to `/slack/*` is verified with it; a Secret Manager secret. Required with `QUARRY_SLACK=true`.",
  }),
  slackApiUrl: textOr("QUARRY_SLACK_API_URL", {
    concern,
    default: "https://slack.com/api/",
    description: "The Slack Web API's base URL (tests point it at a loopback stand-in).",
  }),
  linkKey: text("QUARRY_CHAT_LINK_KEY", {
    concern,
    description:
      "A random secret (32 bytes or more, e.g. `openssl rand -hex 32`) that signs the “Connect your Quarry account” links chat users get; a Secret Manager secret. Required with `QUARRY_SLACK=true`.",
  }),
  linkMinutes: int("QUARRY_CHAT_LINK_MINUTES", {
    concern,
    default: 15,
    min: 1,
    max: 1_440,
    description: "How long a “Connect your Quarry account” link works, minutes.",
  }),
} as const;

/** The names of the settings a Slack app needs, missing from `env`. */
function missingForSlack(read: { botToken?: string; signingSecret?: string; linkKey?: string }): string[] {
  const s = CHAT_SETTINGS;
  return [
    read.signingSecret ? "" : s.signingSecret.doc.name,
    read.botToken ? "" : s.botToken.doc.name,
    read.linkKey && read.linkKey.length >= 32 ? "" : `${s.linkKey.doc.name} (32 characters or more)`,
  ].filter(Boolean);
}

/** The chat settings from an environment, with the problem that keeps Slack from serving, if any. */
export function readChatConfig(env: Env): ChatConfig {
  const s = CHAT_SETTINGS;
  const read = {
    botToken: s.botToken.read(env),
    signingSecret: s.signingSecret.read(env),
    linkKey: s.linkKey.read(env),
  };
  const enabled = s.slack.read(env);
  const missing = enabled ? missingForSlack(read) : [];
  return {
    slack: {
      enabled,
      ...(read.botToken ? { botToken: read.botToken } : {}),
      ...(read.signingSecret ? { signingSecret: read.signingSecret } : {}),
      apiUrl: s.slackApiUrl.read(env),
    },
    ...(read.linkKey ? { linkKey: read.linkKey } : {}),
    linkMinutes: s.linkMinutes.read(env),
    ...(missing.length
      ? {
          problem: `The Slack app is turned on (QUARRY_SLACK=true) but not configured: set ${missing.join(", ")}.`,
        }
      : {}),
  };
}

export const CHAT_DOCS = docsOf(CHAT_SETTINGS);
