/**
 * Where things are, learned at start-up: `GET /api/client-config` (same origin, through the
 * Hosting rewrite) says where the API function is and, locally, where the emulators are; the
 * Firebase web config comes from Hosting's reserved `/__/firebase/init.json`. Vite env vars
 * (`VITE_QUARRY_*`) override both, e.g. for `vite dev` against a running stack.
 */
import type { FirebaseOptions } from "firebase/app";
import type { ClientLimits } from "@quarry/functions/contract";
import { DEFAULT_LIMITS } from "./data/attachments";

/** The server's model, or why it has none (`GET /client-config` → `model`). */
export type ModelSetup =
  | { ready: true; provider: string; providerName: string; model: string }
  | {
      ready: false;
      error: string;
      message: string;
      setup: { provider: string; title: string; command: string; link?: string }[];
    };

export interface ClientConfig {
  /** Unset when the server is older than this page or did not say. */
  model?: ModelSetup;
  projectId: string;
  region: string;
  /** The function URL itself: streams must not go through the Hosting rewrite (it buffers). */
  apiUrl: string;
  authEmulatorUrl?: string;
  firestoreEmulatorHost?: string;
  firebase: FirebaseOptions;
  /** What the page checks before it sends a file or an image (the server's defaults when unsaid). */
  limits: ClientLimits;
}

/** Thrown when the page cannot learn its configuration; the message says what to check. */
class ConfigError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ConfigError";
  }
}

interface ServerConfig {
  model?: ModelSetup;
  projectId?: string;
  region?: string;
  apiUrl?: string;
  authEmulatorUrl?: string;
  firestoreEmulatorHost?: string;
  limits?: Partial<ClientLimits>;
}

async function getJson<T>(url: string): Promise<T | null> {
  try {
    const res = await fetch(url, { headers: { accept: "application/json" } });
    if (!res.ok || !res.headers.get("content-type")?.includes("json")) return null;
    return (await res.json()) as T;
  } catch {
    return null;
  }
}

/** The function URL Firebase gives an HTTPS function named `api`. */
function functionUrl(projectId: string, region: string): string {
  return `https://${region}-${projectId}.cloudfunctions.net/api`;
}

/** Loads the configuration, preferring explicit Vite env vars, then the server, then defaults. */
export async function loadClientConfig(): Promise<ClientConfig> {
  const env = import.meta.env;
  const [server, init] = await Promise.all([
    getJson<ServerConfig>("/api/client-config"),
    getJson<FirebaseOptions>("/__/firebase/init.json"),
  ]);
  const projectId = env.VITE_QUARRY_PROJECT_ID || server?.projectId || init?.projectId;
  if (!projectId) {
    throw new ConfigError(
      "Quarry could not load its configuration: /api/client-config did not answer. Is the `api` function " +
        "deployed (or `npm start` running)? For `vite dev`, set VITE_QUARRY_PROJECT_ID and VITE_QUARRY_API_URL.",
    );
  }
  const region = env.VITE_QUARRY_REGION || server?.region || "us-central1";
  const authEmulatorUrl = env.VITE_QUARRY_AUTH_EMULATOR_URL || server?.authEmulatorUrl;
  return {
    model: server?.model,
    projectId,
    region,
    apiUrl: (env.VITE_QUARRY_API_URL || server?.apiUrl || functionUrl(projectId, region)).replace(/\/$/, ""),
    authEmulatorUrl,
    firestoreEmulatorHost: env.VITE_QUARRY_FIRESTORE_EMULATOR_HOST || server?.firestoreEmulatorHost,
    limits: { ...DEFAULT_LIMITS, ...(server?.limits ?? {}) },
    // Against the emulators any API key works; in production Hosting serves the real web config.
    firebase: {
      ...(init ?? {}),
      projectId,
      apiKey: init?.apiKey || env.VITE_FIREBASE_API_KEY || "demo-api-key",
      authDomain: init?.authDomain || env.VITE_FIREBASE_AUTH_DOMAIN || `${projectId}.firebaseapp.com`,
    },
  };
}

/** True when the page talks to the Auth emulator (local stack): email/password and a test user. */
export const isLocal = (cfg: ClientConfig) => !!cfg.authEmulatorUrl;
