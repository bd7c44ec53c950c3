/**
 * The production chat model: Gemini through `@langchain/google-vertexai`'s ChatVertexAI, loaded
 * lazily. `VERTEX_AI_EMULATOR_HOST=host:port` points the same class at a local HTTPS stand-in with
 * no credentials (the way FIRESTORE_EMULATOR_HOST works for Firestore): the library builds
 * `https://{endpoint}/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:
 * streamGenerateContent`, and GoogleAuth uses the `authClient` and `projectId` we hand it instead
 * of looking for credentials or probing the metadata server. Trust the stand-in's self-signed
 * certificate with NODE_EXTRA_CA_CERTS.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import type { ModelConfig } from "../config";

/** Raised before any network call when the model cannot work; the message says what to set. */
export class ModelConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ModelConfigError";
  }
}

/** Facts about where credentials could come from (gathered by the caller, so this stays pure). */
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

/**
 * Fails fast, without a network call, when Vertex AI cannot be reached with credentials. Without
 * this the library fails only at the first model call, after a multi-second metadata probe.
 */
export function preflightVertex(model: ModelConfig, facts: CredentialFacts): void {
  if (model.emulatorHost) {
    if (!/^[\w.-]+:\d+$/.test(model.emulatorHost)) {
      throw new ModelConfigError(
        `VERTEX_AI_EMULATOR_HOST must look like host:port (e.g. 127.0.0.1:8085), got "${model.emulatorHost}".`,
      );
    }
    return;
  }
  if (!model.project) {
    throw new ModelConfigError("No Vertex AI project: set QUARRY_VERTEX_PROJECT or GOOGLE_CLOUD_PROJECT.");
  }
  if (facts.credentialsFile && !facts.credentialsFileExists) {
    throw new ModelConfigError(
      `GOOGLE_APPLICATION_CREDENTIALS points to ${facts.credentialsFile}, which does not exist. ` +
        "Point it at a service-account key file, or unset it to use `gcloud auth application-default login`.",
    );
  }
  if (!facts.credentialsFile && !facts.adcFileExists && !facts.onGoogleCloud) {
    throw new ModelConfigError(
      "No Google credentials for Vertex AI. Run `gcloud auth application-default login`, or set " +
        "GOOGLE_APPLICATION_CREDENTIALS to a service-account key file with roles/aiplatform.user; " +
        "for local development without Google, set VERTEX_AI_EMULATOR_HOST to a Vertex AI stand-in.",
    );
  }
}

/** Looks at the file system for the credentials ModelConfig names (no network). */
export function gatherCredentialFacts(model: ModelConfig): CredentialFacts {
  const m = model as ModelConfig & { credentialsFile?: string; onGoogleCloud?: boolean };
  const adc = path.join(homedir(), ".config", "gcloud", "application_default_credentials.json");
  return {
    credentialsFile: m.credentialsFile,
    credentialsFileExists: m.credentialsFile ? existsSync(m.credentialsFile) : false,
    adcFileExists: existsSync(adc),
    onGoogleCloud: m.onGoogleCloud === true,
  };
}

/** Builds ChatVertexAI for production or for the stand-in named by `emulatorHost`. */
export async function createChatModel(
  model: ModelConfig,
  facts: CredentialFacts = gatherCredentialFacts(model),
): Promise<BaseChatModel> {
  preflightVertex(model, facts);
  const { ChatVertexAI } = await import("@langchain/google-vertexai");
  const common = {
    model: model.model,
    temperature: model.temperature,
    location: model.location,
    maxRetries: 2,
  };
  if (!model.emulatorHost) {
    return asChatModel(new ChatVertexAI({ ...common, authOptions: { projectId: model.project } }));
  }
  // The stand-in needs no token: an auth client whose fetch is plain fetch. An empty apiKey keeps a
  // GOOGLE_API_KEY in the environment from switching the library to the public endpoint.
  const authClient = { fetch: (url: string, init?: RequestInit) => fetch(url, init) };
  return asChatModel(
    new ChatVertexAI({
      ...common,
      apiKey: "",
      endpoint: model.emulatorHost,
      authOptions: { projectId: model.project, authClient: authClient as never },
    }),
  );
}

// A dynamic import() resolves the package's ESM typings while static type imports in this CommonJS
// build resolve the CJS ones: the same class, declared twice, so TypeScript needs the cast.
function asChatModel(m: unknown): BaseChatModel {
  return m as BaseChatModel;
}
