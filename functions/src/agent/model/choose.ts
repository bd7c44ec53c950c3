/**
 * Which model service runs, decided from configuration alone (no network, no LangChain): the
 * function uses it to build its model and to tell the web page, the launcher uses the same code to
 * print its model line, so the three can never disagree.
 *
 * Auto choice: the settings a person sets on purpose (a Gemini API key, an OpenAI-compatible base
 * URL, a Vertex AI stand-in) win over ambient Google credentials (gcloud's application-default
 * file, a key file, or running on Google Cloud), which are only used when nothing else is set.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import type { ModelConfig, ModelProvider } from "../../config";

/** Gemini model used when QUARRY_MODEL is not set (Vertex AI and the Gemini Developer API). */
const DEFAULT_GEMINI_MODEL = "gemini-2.5-flash";

/** Raised before any network call when the model cannot work; the message says what to set. */
export class ModelConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ModelConfigError";
  }
}

/** Facts about where Google credentials could come from (gathered by the caller, so this stays pure). */
export interface CredentialFacts {
  /** GOOGLE_APPLICATION_CREDENTIALS, if set. */
  credentialsFile?: string;
  /** True when that file exists. */
  credentialsFileExists: boolean;
  /** True when gcloud's application-default credentials file exists. */
  adcFileExists: boolean;
  /** True on Cloud Functions / Cloud Run, where the metadata server provides credentials. */
  onGoogleCloud: boolean;
}

/** Looks at the file system for the credentials ModelConfig names (no network). */
export function gatherCredentialFacts(model: ModelConfig): CredentialFacts {
  const adc = path.join(homedir(), ".config", "gcloud", "application_default_credentials.json");
  return {
    credentialsFile: model.credentialsFile,
    credentialsFileExists: model.credentialsFile ? existsSync(model.credentialsFile) : false,
    adcFileExists: existsSync(adc),
    onGoogleCloud: model.onGoogleCloud,
  };
}

/** One way to get a model, as the launcher prints it and the web page's set-up card shows it. */
export interface SetupOption {
  provider: ModelProvider;
  /** e.g. "Gemini API key (free tier from Google AI Studio)". */
  title: string;
  /** What to set, e.g. "GEMINI_API_KEY=<your key> npm start". */
  command: string;
  /** Where to get it. */
  link?: string;
}

const SETUP_OPTIONS: readonly SetupOption[] = Object.freeze([
  {
    provider: "gemini",
    title: "Gemini API key (free tier from Google AI Studio)",
    command: "GEMINI_API_KEY=<your key> npm start",
    link: "https://aistudio.google.com/apikey",
  },
  {
    provider: "openai",
    title: "Local OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio)",
    command: "QUARRY_OPENAI_BASE_URL=http://127.0.0.1:11434/v1 QUARRY_MODEL=qwen2.5:7b npm start",
    link: "https://ollama.com",
  },
  {
    provider: "vertex",
    title: "Vertex AI on a Google Cloud project",
    command: "gcloud auth application-default login && QUARRY_VERTEX_PROJECT=<project> npm start",
    link: "https://cloud.google.com/vertex-ai/generative-ai/docs/start/quickstarts/quickstart-multimodal",
  },
]);

export const PROVIDER_NAMES: Record<ModelProvider, string> = {
  vertex: "Vertex AI",
  gemini: "Gemini Developer API",
  openai: "OpenAI-compatible server",
};

/** The model that will run, or why none can. */
export type ModelStatus =
  | {
      ready: true;
      provider: ModelProvider;
      model: string;
      /** Where requests go: the endpoint or base URL (never a key). */
      endpoint: string;
      /** Why this provider: "explicit", "only one configured", "ambient Google credentials". */
      reason: string;
    }
  | {
      ready: false;
      /** Error code for the run's error event. */
      error: "model:not_configured";
      /** What is wrong and what to set, in one paragraph. */
      message: string;
      /** The three ways to get a model. */
      setup: readonly SetupOption[];
    };

function notReady(message: string): ModelStatus {
  return { ready: false, error: "model:not_configured", message, setup: SETUP_OPTIONS };
}

const NO_MODEL =
  "No AI model is configured, so Quarry cannot answer yet. Set one of: GEMINI_API_KEY (a Gemini API key, " +
  "free from Google AI Studio); QUARRY_OPENAI_BASE_URL and QUARRY_MODEL (a local OpenAI-compatible server such " +
  "as Ollama); or Google credentials for Vertex AI (`gcloud auth application-default login`). Then restart.";

function validUrl(raw: string): boolean {
  try {
    const u = new URL(raw);
    return u.protocol === "http:" || u.protocol === "https:";
  } catch {
    return false;
  }
}

/** Problems with one provider's settings, or null when it can run. */
function problemWith(provider: ModelProvider, cfg: ModelConfig, facts: CredentialFacts): string | null {
  switch (provider) {
    case "gemini":
      if (!cfg.geminiApiKey)
        return "The Gemini Developer API needs an API key: set GEMINI_API_KEY (get one at https://aistudio.google.com/apikey).";
      if (cfg.geminiBaseUrl && !validUrl(cfg.geminiBaseUrl))
        return `QUARRY_GEMINI_BASE_URL must be an http(s) URL, got "${cfg.geminiBaseUrl}".`;
      return null;
    case "openai":
      if (!cfg.openaiBaseUrl)
        return "An OpenAI-compatible server needs its base URL: set QUARRY_OPENAI_BASE_URL (Ollama: http://127.0.0.1:11434/v1).";
      if (!validUrl(cfg.openaiBaseUrl))
        return `QUARRY_OPENAI_BASE_URL must be an http(s) URL such as http://127.0.0.1:11434/v1, got "${cfg.openaiBaseUrl}".`;
      if (!cfg.model)
        return "Set QUARRY_MODEL to a model your OpenAI-compatible server serves (for Ollama, one from `ollama list`, e.g. qwen2.5:7b).";
      return null;
    case "vertex":
      return vertexProblem(cfg, facts);
  }
}

/**
 * Why Vertex AI cannot be reached with credentials, or null. Checked without a network call: the
 * library otherwise fails only at the first model call, after a multi-second metadata probe.
 */
function vertexProblem(model: ModelConfig, facts: CredentialFacts): string | null {
  if (model.emulatorHost) {
    return /^[\w.-]+:\d+$/.test(model.emulatorHost)
      ? null
      : `VERTEX_AI_EMULATOR_HOST must look like host:port (e.g. 127.0.0.1:8085), got "${model.emulatorHost}".`;
  }
  if (!model.project) return "No Vertex AI project: set QUARRY_VERTEX_PROJECT or GOOGLE_CLOUD_PROJECT.";
  if (facts.credentialsFile && !facts.credentialsFileExists) {
    return (
      `GOOGLE_APPLICATION_CREDENTIALS points to ${facts.credentialsFile}, which does not exist. ` +
      "Point it at a service-account key file, or unset it to use `gcloud auth application-default login`."
    );
  }
  if (!facts.credentialsFile && !facts.adcFileExists && !facts.onGoogleCloud) {
    return (
      "No Google credentials for Vertex AI. Run `gcloud auth application-default login`, or set " +
      "GOOGLE_APPLICATION_CREDENTIALS to a service-account key file with roles/aiplatform.user."
    );
  }
  return null;
}

/** Throws ModelConfigError when Vertex AI cannot work (kept for callers that build ChatVertexAI directly). */
export function preflightVertex(model: ModelConfig, facts: CredentialFacts): void {
  const problem = vertexProblem(model, facts);
  if (problem) throw new ModelConfigError(problem);
}

function endpointOf(provider: ModelProvider, cfg: ModelConfig): string {
  if (provider === "gemini") return cfg.geminiBaseUrl ?? "https://generativelanguage.googleapis.com";
  if (provider === "openai") return cfg.openaiBaseUrl!;
  return cfg.emulatorHost
    ? `https://${cfg.emulatorHost}`
    : `https://${cfg.location}-aiplatform.googleapis.com (project ${cfg.project})`;
}

function ready(provider: ModelProvider, cfg: ModelConfig, reason: string): ModelStatus {
  return {
    ready: true,
    provider,
    model: cfg.model ?? DEFAULT_GEMINI_MODEL,
    endpoint: endpointOf(provider, cfg),
    reason,
  };
}

/** Decides which provider and model run, or why none can (pure: facts are passed in). */
export function resolveModel(
  cfg: ModelConfig,
  facts: CredentialFacts = gatherCredentialFacts(cfg),
): ModelStatus {
  if (cfg.provider) {
    const problem = problemWith(cfg.provider, cfg, facts);
    return problem
      ? notReady(`QUARRY_MODEL_PROVIDER=${cfg.provider}: ${problem}`)
      : ready(cfg.provider, cfg, "QUARRY_MODEL_PROVIDER");
  }
  const explicit: ModelProvider[] = [];
  if (cfg.geminiApiKey) explicit.push("gemini");
  if (cfg.openaiBaseUrl) explicit.push("openai");
  if (cfg.emulatorHost) explicit.push("vertex");
  if (explicit.length > 1) {
    const names = explicit.map((p) => `${PROVIDER_NAMES[p]} (${p})`).join(" and ");
    return notReady(
      `Several model providers are configured: ${names}. Choose one with QUARRY_MODEL_PROVIDER=` +
        `${explicit.join("|")}, or unset the others.`,
    );
  }
  if (explicit.length === 1) {
    const problem = problemWith(explicit[0], cfg, facts);
    return problem ? notReady(problem) : ready(explicit[0], cfg, "the only one configured");
  }
  if (!vertexProblem(cfg, facts)) return ready("vertex", cfg, "Google credentials found");
  // Credentials named but broken deserve their own message; otherwise say the three ways.
  if (facts.credentialsFile && !facts.credentialsFileExists) return notReady(vertexProblem(cfg, facts)!);
  return notReady(NO_MODEL);
}

/** One line for logs and the launcher: "Gemini Developer API · gemini-2.5-flash (…)". */
export function describeModel(status: ModelStatus): string {
  if (!status.ready) return status.message;
  return `${PROVIDER_NAMES[status.provider]} · ${status.model} at ${status.endpoint} (${status.reason})`;
}
