/**
 * The chat channels (functions/src/chat, docs/chat.md): the Slack app's bot token and signing
 * secret, where its Web API is, and the key that signs "Connect your Quarry account" links. Off
 * unless `QUARRY_SLACK=true`; turned on without its secrets, the Slack routes refuse every request
 * with a message naming what to set (fail closed).
 */
import { docsOf, flag, int, list, text, textOr, type Env } from "./define";

export interface ChatConfig {
  slack: {
    /** Whether `/slack/events` and `/slack/interactions` serve (QUARRY_SLACK). */
    enabled: boolean;
    botToken?: string;
    signingSecret?: string;
    /** The Web API's base URL (a stand-in's in tests). */
    apiUrl: string;
  };
  google: {
    /** Whether `/chat/events` serves (QUARRY_GOOGLE_CHAT). */
    enabled: boolean;
    /** What Chat's bearer tokens must be for: the project number, or the endpoint's URL. */
    audience?: string;
    /** Where the token's signing certificates are (x509 PEMs by key id). */
    certsUrl: string;
    /** The Chat API's root URL (a stand-in's in tests). */
    apiUrl: string;
    /**
     * Workspace domains whose people Chat names by a verified email are linked by it, without a
     * connect link (QUARRY_GOOGLE_CHAT_TRUSTED_DOMAINS), lower case; empty: everyone links.
     */
    trustedDomains: string[];
    /** Why the Google Chat app cannot serve, naming what to set. */
    problem?: string;
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
  google: flag("QUARRY_GOOGLE_CHAT", {
    concern,
    default: false,
    description:
      "Serve the Google Chat app ([Chat](chat.md#google-chat)): `/chat/events` on the `api` function, answers posted by the `chatRun` task queue. Deploy-time too: mounts the `QUARRY_CHAT_LINK_KEY` secret.",
  }),
  googleAudience: text("QUARRY_GOOGLE_CHAT_AUDIENCE", {
    concern,
    description:
      "What Google Chat's bearer tokens must be issued for, as set in the Chat API's configuration (“Authentication audience”): the project number (tokens issued by `chat@system.gserviceaccount.com`) or the HTTP endpoint URL (Google ID tokens for the email `chat@system.gserviceaccount.com`). Required with `QUARRY_GOOGLE_CHAT=true`.",
  }),
  googleCertsUrl: text("QUARRY_GOOGLE_CHAT_CERTS_URL", {
    concern,
    defaultText: "Chat's (project number) or Google's (endpoint URL) published certificates",
    description:
      "Where the certificates that sign Chat's tokens are fetched (`{key id: PEM}`); tests point it at a stand-in.",
  }),
  googleApiUrl: textOr("QUARRY_GOOGLE_CHAT_API_URL", {
    concern,
    default: "https://chat.googleapis.com/",
    description:
      "The Google Chat API's root URL (tests point it at a loopback stand-in; the emulator then sends it a fixed token).",
  }),
  googleTrustedDomains: list("QUARRY_GOOGLE_CHAT_TRUSTED_DOMAINS", {
    concern,
    defaultText: "none: everyone links through a connect link",
    description:
      "Google Workspace domains whose people are linked by the email Google Chat gives for them, without a connect link: a message from `someone@<domain>` is linked to the Quarry account with that **verified** email (an account whose email is not verified, or none, still gets the connect link). Set it only to your own Workspace domains.",
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

/** Chat's own certificates (its tokens for a project-number audience) and Google's (ID tokens). */
const CHAT_CERTS =
  "https://www.googleapis.com/service_accounts/v1/metadata/x509/chat@system.gserviceaccount.com";
const GOOGLE_CERTS = "https://www.googleapis.com/oauth2/v1/certs";

function readGoogle(env: Env, linkKey: string | undefined): ChatConfig["google"] {
  const s = CHAT_SETTINGS;
  const enabled = s.google.read(env);
  const audience = s.googleAudience.read(env);
  const missing = enabled
    ? [
        audience ? "" : s.googleAudience.doc.name,
        linkKey && linkKey.length >= 32 ? "" : `${s.linkKey.doc.name} (32 characters or more)`,
      ].filter(Boolean)
    : [];
  return {
    enabled,
    ...(audience ? { audience } : {}),
    certsUrl: s.googleCertsUrl.read(env) ?? (audience?.startsWith("https://") ? GOOGLE_CERTS : CHAT_CERTS),
    apiUrl: s.googleApiUrl.read(env),
    trustedDomains: s.googleTrustedDomains.read(env).map((d) => d.toLowerCase()),
    ...(missing.length
      ? {
          problem: `The Google Chat app is turned on (QUARRY_GOOGLE_CHAT=true) but not configured: set ${missing.join(", ")}.`,
        }
      : {}),
  };
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
    google: readGoogle(env, read.linkKey),
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
