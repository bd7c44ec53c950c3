/**
 * Deploy-time options: firebase-functions params, so `firebase deploy` asks for them or reads them
 * from `functions/.env.<project>`. Each is declared once here; the param and the page's row come
 * from the same declaration.
 */
import { defineInt, defineSecret, defineString } from "firebase-functions/params";
import { docsOf, int, textOr, type Env, type SettingDoc } from "./define";

const concern = "deploy";
const scope = "deploy";

/** The deploy-time settings (their defaults are the params' defaults). */
export const DEPLOY_SETTINGS = {
  region: textOr("QUARRY_REGION", {
    concern,
    scope,
    default: "us-central1",
    description: "Region of the functions.",
  }),
  memoryMib: int("QUARRY_MEMORY_MIB", {
    concern,
    scope,
    default: 1024,
    min: 128,
    description: "Memory of the `api` function, MiB (256, 512, 1024, 2048, 4096, …).",
  }),
  timeoutSeconds: int("QUARRY_TIMEOUT_SECONDS", {
    concern,
    scope,
    default: 900,
    min: 1,
    max: 3600,
    boundsWhy: "HTTPS functions allow up to 3600",
    description: "Longest run, seconds.",
  }),
  concurrency: int("QUARRY_CONCURRENCY", {
    concern,
    scope,
    default: 40,
    min: 1,
    description:
      "Concurrent requests per instance: runs mostly wait on the model, so several share one instance.",
  }),
  corsOrigins: textOr("QUARRY_CORS_ORIGINS", {
    concern,
    scope,
    default: "http://127.0.0.1:5000,http://localhost:5000",
    description:
      "Comma-separated web origins allowed to call the function URL directly (CORS); `npm start` sets its own ports.",
  }),
} as const;

const d = DEPLOY_SETTINGS;

/** Region of the `api` function. */
export const REGION = defineString(d.region.doc.name, { default: d.region.read({}) });
/** Memory of the `api` function in MiB. */
export const MEMORY_MIB = defineInt(d.memoryMib.doc.name, { default: d.memoryMib.read({}) });
/** Longest run in seconds (Cloud Functions v2 HTTPS allows up to 3600). */
export const TIMEOUT_SECONDS = defineInt(d.timeoutSeconds.doc.name, { default: d.timeoutSeconds.read({}) });
/** Concurrent requests per instance. */
export const CONCURRENCY = defineInt(d.concurrency.doc.name, { default: d.concurrency.read({}) });
/** Comma-separated web origins allowed to call the function URL directly (CORS). */
export const CORS_ORIGINS = defineString(d.corsOrigins.doc.name, { default: d.corsOrigins.read({}) });

/**
 * The Gemini Developer API key as a Cloud Secret Manager secret (`firebase functions:secrets:set
 * GEMINI_API_KEY`): Cloud Functions puts it in the environment, where `readConfig` finds it.
 */
const GEMINI_API_KEY = defineSecret("GEMINI_API_KEY");

/**
 * User identity mode's secrets (QUARRY_BQ_IDENTITY=user in functions/.env.<project>): the OAuth
 * client's secret and the key that encrypts stored refresh tokens.
 */
const OAUTH_CLIENT_SECRET = defineSecret("QUARRY_OAUTH_CLIENT_SECRET");
const TOKEN_KEY = defineSecret("QUARRY_TOKEN_KEY");
/** OAuth for hosted MCP clients (QUARRY_MCP_OAUTH=true): the keys that sign its access tokens. */
const OAUTH_JWKS = defineSecret("QUARRY_MCP_OAUTH_JWKS");
/** The Slack app (QUARRY_SLACK=true): its bot token and signing secret. */
const SLACK_SECRETS = ["QUARRY_SLACK_BOT_TOKEN", "QUARRY_SLACK_SIGNING_SECRET"];
/** Either chat app (QUARRY_SLACK or QUARRY_GOOGLE_CHAT): the key that signs connect links and chart URLs. */
const CHAT_LINK_KEY = "QUARRY_CHAT_LINK_KEY";

/**
 * Secrets the `api` function mounts. The Gemini key is declared only for a deploy that chose it
 * (QUARRY_MODEL_PROVIDER=gemini in functions/.env.<project>): a declared secret makes every deploy
 * require it, and the functions emulator would try to fetch it from Secret Manager (it reads the
 * key from the shell environment instead).
 */
export function functionSecrets(env: Env = process.env): ReturnType<typeof defineSecret>[] {
  const deploying = env.FUNCTIONS_EMULATOR !== "true";
  if (!deploying) return [];
  return [
    ...(env.QUARRY_MODEL_PROVIDER === "gemini" ? [GEMINI_API_KEY] : []),
    ...(env.QUARRY_BQ_IDENTITY === "user" ? [OAUTH_CLIENT_SECRET, TOKEN_KEY] : []),
    ...(env.QUARRY_MCP_OAUTH === "true" ? [OAUTH_JWKS] : []),
    ...(env.QUARRY_SLACK === "true" ? SLACK_SECRETS.map((name) => defineSecret(name)) : []),
    ...(env.QUARRY_SLACK === "true" || env.QUARRY_GOOGLE_CHAT === "true"
      ? [defineSecret(CHAT_LINK_KEY)]
      : []),
  ];
}

export const DEPLOY_DOCS: SettingDoc[] = docsOf(DEPLOY_SETTINGS);
