/**
 * What the platform says about where the function runs: the project, the emulators, the page's
 * API URL. Mostly set by Google Cloud, firebase-tools or `npm start`, not by hand.
 */
import { DEPLOY_SETTINGS } from "./deploy";
import { ConfigError, docsOf, documented, text, type Env } from "./define";

interface EmulatorHosts {
  firestore?: string;
  auth?: string;
  vertexAi?: string;
  bigQuery?: string;
}

/** The platform settings (part of `RuntimeConfig`). */
export interface PlatformConfig {
  /** Google Cloud / Firebase project id. */
  projectId: string;
  /** True inside firebase-tools' functions emulator. */
  inEmulator: boolean;
  emulators: EmulatorHosts;
  /** The API's public base URL (the function URL), for the web client. */
  apiUrl: string;
  /** Region of the function (for the default apiUrl). */
  region: string;
}

const concern = "platform";
const scope = "platform";

const PLATFORM_SETTINGS = {
  gcloudProject: text("GCLOUD_PROJECT", {
    concern,
    scope,
    defaultText: "set by Cloud Functions and the emulator",
    description: "The project id.",
  }),
  googleCloudProject: text("GOOGLE_CLOUD_PROJECT", {
    concern,
    scope,
    description: "The project id, when `GCLOUD_PROJECT` is unset (scripts run outside the emulator).",
  }),
  projectId: text("QUARRY_PROJECT_ID", {
    concern,
    scope,
    description: "The project id, when neither of the above is set.",
  }),
  firestoreEmulator: text("FIRESTORE_EMULATOR_HOST", {
    concern,
    scope,
    defaultText: "set by `npm start`",
    description:
      "Firestore emulator address. Required inside the functions emulator: without it the function refuses to load instead of hanging.",
  }),
  authEmulator: text("FIREBASE_AUTH_EMULATOR_HOST", {
    concern,
    scope,
    defaultText: "set by firebase-tools",
    description: "Auth emulator address.",
  }),
  functionsEmulator: documented("FUNCTIONS_EMULATOR", {
    concern,
    scope,
    defaultText: "set by firebase-tools",
    description: "`true` inside the functions emulator.",
  }),
  controlApi: documented("FUNCTIONS_CONTROL_API", {
    concern,
    scope,
    defaultText: "set by firebase-tools",
    description:
      "`true` while firebase-tools discovers the triggers (the emulator checks and the access report are skipped then).",
  }),
  apiUrl: text("QUARRY_API_URL", {
    concern,
    scope: "runtime",
    defaultText: "`https://<region>-<project>.cloudfunctions.net/api`",
    description: "The API URL the web page is told to call.",
  }),
} as const;

/**
 * Checks that a function running in the emulator talks to a Firestore emulator. Without
 * FIRESTORE_EMULATOR_HOST the Admin SDK would try production Firestore and hang for minutes
 * looking for credentials, so this fails at load time instead, saying what to set.
 */
export function assertEmulatorEnvironment(env: Env): void {
  // firebase-tools' trigger discovery loads the code with a bare environment; only the runtime counts.
  if (env.FUNCTIONS_CONTROL_API === "true") return;
  if (env.FUNCTIONS_EMULATOR === "true" && !env.FIRESTORE_EMULATOR_HOST) {
    throw new ConfigError(
      "FIRESTORE_EMULATOR_HOST is not set in the functions emulator's environment. " +
        "Start the local stack with `npm start` (it starts the Firestore emulator and sets it), " +
        "or export FIRESTORE_EMULATOR_HOST=127.0.0.1:<port> of a running Firestore emulator.",
    );
  }
}

/** The platform settings from an environment; no project id is refused, saying what to set. */
export function readPlatformConfig(env: Env): PlatformConfig {
  const s = PLATFORM_SETTINGS;
  const projectId = s.gcloudProject.read(env) ?? s.googleCloudProject.read(env) ?? s.projectId.read(env);
  if (!projectId) {
    throw new ConfigError(
      "No project id: set GOOGLE_CLOUD_PROJECT (Cloud Functions and the emulator set GCLOUD_PROJECT).",
    );
  }
  const region = DEPLOY_SETTINGS.region.read(env);
  return {
    projectId,
    inEmulator: env.FUNCTIONS_EMULATOR === "true",
    emulators: Object.freeze({
      firestore: s.firestoreEmulator.read(env),
      auth: s.authEmulator.read(env),
      vertexAi: env.VERTEX_AI_EMULATOR_HOST || undefined,
      bigQuery: env.BIGQUERY_EMULATOR_HOST || undefined,
    }),
    region,
    apiUrl: s.apiUrl.read(env) || `https://${region}-${projectId}.cloudfunctions.net/api`,
  };
}

export const PLATFORM_DOCS = docsOf(PLATFORM_SETTINGS);
