/** Which model answers: the provider, the model, and each provider's endpoint and credentials. */
import { docsOf, documented, num, oneOf, text, textOr, type Env } from "./define";

/** The model services Quarry can use (one module each in `agent/model/`). */
export type ModelProvider = "vertex" | "gemini" | "openai";

export interface ModelConfig {
  /** QUARRY_MODEL_PROVIDER; unset = chosen from what is configured (see `agent/model/choose.ts`). */
  provider?: ModelProvider;
  /** QUARRY_MODEL; unset = the provider's default (Gemini: gemini-2.5-flash; an OpenAI-compatible server has none). */
  model?: string;
  /** QUARRY_EMBEDDING_MODEL: an embedding model of the same provider for schema linking; unset = lexical only. */
  embeddingModel?: string;
  /** Vertex AI project (defaults to the Firebase project). */
  project: string;
  /** Vertex AI location. */
  location: string;
  /** `host:port` of a local Vertex AI stand-in (VERTEX_AI_EMULATOR_HOST). */
  emulatorHost?: string;
  temperature: number;
  /** Service-account key file for Google APIs (GOOGLE_APPLICATION_CREDENTIALS), if any. */
  credentialsFile?: string;
  /** Running on Google Cloud (Cloud Functions/Run set K_SERVICE), where the metadata server has credentials. */
  onGoogleCloud: boolean;
  /** Gemini Developer API key (GEMINI_API_KEY, or GOOGLE_API_KEY); deployed as a secret. */
  geminiApiKey?: string;
  /** Base URL of the Gemini Developer API (QUARRY_GEMINI_BASE_URL), for a gateway or a local stand-in. */
  geminiBaseUrl?: string;
  /** Base URL of an OpenAI-compatible server, e.g. `http://127.0.0.1:11434/v1` (QUARRY_OPENAI_BASE_URL). */
  openaiBaseUrl?: string;
  /** Key for that server, if it wants one (QUARRY_OPENAI_API_KEY); local servers usually do not. */
  openaiApiKey?: string;
}

const concern = "model";

const MODEL_SETTINGS = {
  provider: oneOf<ModelProvider>("QUARRY_MODEL_PROVIDER", {
    concern,
    allowed: ["vertex", "gemini", "openai"],
    defaultText: "chosen from what is set",
    description:
      "Needed only when two providers are set on purpose. Deploy-time too: `gemini` mounts the `GEMINI_API_KEY` secret.",
  }),
  model: text("QUARRY_MODEL", {
    concern,
    defaultText: "`gemini-2.5-flash` (Gemini, Vertex AI); none (OpenAI-compatible)",
    description: "The model, for any provider (e.g. `gemini-2.5-pro`, `qwen2.5:7b`).",
  }),
  embeddingModel: text("QUARRY_EMBEDDING_MODEL", {
    concern,
    defaultText: "unset (lexical linking only)",
    description:
      "An embedding model of the same provider that helps schema linking (e.g. `text-embedding-005`, `gemini-embedding-001`, `nomic-embed-text`).",
  }),
  geminiApiKey: text("GEMINI_API_KEY", {
    concern,
    description:
      "Gemini Developer API key (`GOOGLE_API_KEY` is read too). Locally from the shell; deployed as a Secret Manager secret, never in a `.env` file.",
  }),
  googleApiKey: text("GOOGLE_API_KEY", { concern, description: "Read when `GEMINI_API_KEY` is unset." }),
  geminiBaseUrl: text("QUARRY_GEMINI_BASE_URL", {
    concern,
    defaultText: "`https://generativelanguage.googleapis.com`",
    description: "Another endpoint for the Gemini Developer API (a gateway, a stand-in).",
  }),
  openaiBaseUrl: text("QUARRY_OPENAI_BASE_URL", {
    concern,
    description: "Base URL of an OpenAI-compatible server, e.g. `http://127.0.0.1:11434/v1` (Ollama).",
  }),
  openaiApiKey: text("QUARRY_OPENAI_API_KEY", {
    concern,
    description: "Key for that server, if it wants one.",
  }),
  vertexProject: text("QUARRY_VERTEX_PROJECT", {
    concern,
    defaultText: "`GOOGLE_CLOUD_PROJECT`, else the project id",
    description: "Vertex AI project.",
  }),
  vertexLocation: textOr("QUARRY_VERTEX_LOCATION", {
    concern,
    default: "us-central1",
    description: "Vertex AI location.",
  }),
  temperature: num("QUARRY_TEMPERATURE", { concern, default: 0, description: "Model temperature." }),
  vertexEmulator: text("VERTEX_AI_EMULATOR_HOST", {
    concern,
    scope: "platform",
    description: "`host:port` of a local Vertex AI stand-in; `npm start` passes it through.",
  }),
  credentials: text("GOOGLE_APPLICATION_CREDENTIALS", {
    concern,
    scope: "platform",
    description: "Service-account key for real Google APIs; `npm start` passes it through.",
  }),
  kService: documented("K_SERVICE", {
    concern,
    scope: "platform",
    defaultText: "set by Cloud Functions",
    description: "Marks Google Cloud, where the metadata server has credentials for Vertex AI.",
  }),
} as const;

/** The model settings from an environment. */
export function readModelConfig(env: Env, projectId: string): ModelConfig {
  const s = MODEL_SETTINGS;
  return {
    provider: s.provider.read(env),
    model: s.model.read(env),
    embeddingModel: s.embeddingModel.read(env),
    project: s.vertexProject.read(env) || env.GOOGLE_CLOUD_PROJECT || projectId,
    location: s.vertexLocation.read(env),
    emulatorHost: s.vertexEmulator.read(env),
    temperature: s.temperature.read(env),
    credentialsFile: s.credentials.read(env),
    onGoogleCloud: Boolean(env.K_SERVICE) && env.FUNCTIONS_EMULATOR !== "true",
    geminiApiKey: s.geminiApiKey.read(env) || s.googleApiKey.read(env),
    geminiBaseUrl: s.geminiBaseUrl.read(env),
    openaiBaseUrl: s.openaiBaseUrl.read(env),
    openaiApiKey: s.openaiApiKey.read(env),
  };
}

export const MODEL_DOCS = docsOf(MODEL_SETTINGS);
