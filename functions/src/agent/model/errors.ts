/**
 * Failures of the model service, told in words a user can act on. Each client library throws its
 * own shape (google-common: `response.status` and a JSON body in the message; @google/generative-ai:
 * `status` and `errorDetails`; openai: `status`, or a connection error with a `cause`), so this
 * reads the few facts they share — HTTP status, Google's status/reason strings, network error
 * codes — and maps them to one `model:*` code with a message naming what to change.
 */
import type { ModelProvider } from "../../config";
import { QuarryError } from "../../errors";
import { PROVIDER_NAMES } from "./choose";
import { transportFailure, type TransportFailure } from "../../transport";

/** What the running model is, for messages (never the key). */
export interface ModelInfo {
  /** Unset for a model handed in directly (tests, library users). */
  provider?: ModelProvider;
  model: string;
  /** Where requests go; unset for a model handed in directly. */
  endpoint?: string;
}

interface Facts {
  status?: number;
  text: string;
}

function facts(err: unknown): Facts {
  const e = err as {
    status?: unknown;
    response?: { status?: unknown };
    message?: unknown;
    errorDetails?: unknown;
    error?: unknown;
    code?: unknown;
    cause?: unknown;
    name?: unknown;
  };
  const status = [e?.status, e?.response?.status].find((s) => typeof s === "number") as number | undefined;
  const parts = [e?.name, e?.message, e?.errorDetails, e?.error].map((p) =>
    typeof p === "string" ? p : p === undefined ? "" : JSON.stringify(p),
  );
  for (let c: unknown = (err as { cause?: unknown })?.cause, depth = 0; c && depth < 4; depth++) {
    const msg = (c as { message?: unknown }).message;
    if (typeof msg === "string") parts.push(msg);
    c = (c as { cause?: unknown }).cause;
  }
  return { status, text: parts.join(" ") };
}

/**
 * The service's own words, shortened: the `message` of a Google/OpenAI JSON error body, or the
 * text after "[429 Too Many Requests]" (@google/generative-ai), or a leading status stripped.
 */
export function serviceMessage(err: unknown): string {
  const raw = String((err as { message?: unknown })?.message ?? err);
  const json = /"message"\s*:\s*"((?:[^"\\]|\\.)*)"/.exec(raw);
  const bracketed = /\[\d{3}[^\]]*\]\s*([^[{]+)/.exec(raw);
  const text = (json?.[1].replace(/\\"/g, '"') ?? bracketed?.[1] ?? raw.replace(/^\d{3}\s+/, "")).trim();
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

function authMessage(info: ModelInfo): string {
  switch (info.provider) {
    case undefined:
      return "The model service refused Quarry's credentials: check the key or credentials it is configured with.";
    case "gemini":
      return (
        "The Gemini API rejected the API key (GEMINI_API_KEY): it is wrong, revoked or lacks access. Create a " +
        "key at https://aistudio.google.com/apikey, set GEMINI_API_KEY to it and restart Quarry."
      );
    case "vertex":
      return (
        "Vertex AI refused Quarry's Google credentials. Run `gcloud auth application-default login` (locally) or " +
        "grant the function's service account roles/aiplatform.user, and check that the Vertex AI API is " +
        `enabled in project ${info.endpoint?.match(/project ([^)]+)/)?.[1] ?? "(your project)"}.`
      );
    case "openai":
      return (
        `The model server at ${info.endpoint ?? "QUARRY_OPENAI_BASE_URL"} refused the request as unauthorized: set QUARRY_OPENAI_API_KEY ` +
        "to the key it expects and restart Quarry."
      );
  }
}

/** What the caller knows about the call that failed. */
/** How model servers say a request's images or files are beyond the model. */
const UNSUPPORTED_INPUT =
  /image|vision|multimodal|mmproj|modalit|does not support|not supported|unsupported/i;

interface CallFacts {
  /** Tokens of this call had reached the user when it failed. */
  streamed?: boolean;
  /** Attempts made (transport failures are retried while nothing reached the user). */
  attempts?: number;
  /** The call carried images or PDFs (a refusal may be the model not reading them). */
  attachments?: boolean;
}

/**
 * Maps a model-service failure to a QuarryError with a `model:*` code, or returns undefined when
 * the error is not one (an abort, a bug): those keep their own handling.
 */
export function classifyModelError(
  err: unknown,
  info: ModelInfo,
  call: CallFacts = {},
): QuarryError | undefined {
  if (err instanceof QuarryError) return err;
  const name = (err as { name?: unknown })?.name;
  if (name === "AbortError" || name === "RunAbortedError") return undefined;
  const transport = transportFailure(err);
  if (transport) return transportError(err, transport, info, call);
  const { status, text } = facts(err);
  const service = info.provider ? PROVIDER_NAMES[info.provider] : "The model service";
  const opts = { cause: err };
  if (/SAFETY|PROHIBITED_CONTENT|BLOCKLIST|blockReason|GoogleAISafetyError|RECITATION/.test(text)) {
    return new QuarryError(
      "model:safety",
      "The model's safety filters blocked this question or its answer. Rephrase the question and ask again.",
      opts,
    );
  }
  // LangChain's words for a stream that carried no chunk at all (a blocked prompt, for one).
  if (status === undefined && /Received empty response from chat model call/.test(text)) {
    return emptyReplyError(info);
  }
  if (
    status === 401 ||
    status === 403 ||
    /API_KEY_INVALID|API key not valid|PERMISSION_DENIED|UNAUTHENTICATED|AuthenticationError|invalid_api_key/i.test(
      text,
    )
  ) {
    return new QuarryError("model:auth", authMessage(info), opts);
  }
  if (status === 429 || /RESOURCE_EXHAUSTED|RateLimitError|quota/i.test(text)) {
    return new QuarryError(
      "model:quota",
      `${service} says the quota or rate limit for ${info.model} is used up (${serviceMessage(err)}). ` +
        "Wait a minute and ask again; if it persists, raise the quota or use a key or project with more.",
      opts,
    );
  }
  if (status === 404 || /NOT_FOUND|model_not_found|NotFoundError/.test(text)) {
    const hint =
      info.provider === "openai"
        ? `pull it on the server (Ollama: \`ollama pull ${info.model}\`) or set QUARRY_MODEL to one it serves (\`ollama list\`)`
        : "set QUARRY_MODEL to a Gemini model it serves, e.g. gemini-2.5-flash";
    return new QuarryError(
      "model:not_found",
      `${service} has no model "${info.model}": ${hint}, then restart Quarry.`,
      opts,
    );
  }
  if (status !== undefined && status >= 500) {
    return new QuarryError(
      "model:unavailable",
      `${service} is overloaded or failing (HTTP ${status}: ${serviceMessage(err)}). Your question is saved: ` +
        "ask again in a moment.",
      opts,
    );
  }
  // A model that reads no images (a text-only model on an OpenAI-compatible server, say) refuses the
  // call in its own words: said as such, not as a bad request.
  if (call.attachments && status !== undefined && status >= 400 && UNSUPPORTED_INPUT.test(text)) {
    return new QuarryError(
      "model:unsupported_input",
      `${service} cannot read the attached image or PDF with ${info.model} (${serviceMessage(err)}). ` +
        "Ask without the attachment, or set QUARRY_MODEL to a model that reads images (a vision model).",
      opts,
    );
  }
  if (status !== undefined && status >= 400) {
    return new QuarryError(
      "model:bad_request",
      `${service} refused the request (HTTP ${status}): ${serviceMessage(err)}`,
      opts,
    );
  }
  return undefined;
}

function where(info: ModelInfo): string {
  const service = info.provider ? PROVIDER_NAMES[info.provider] : "The model service";
  return `${service}${info.endpoint ? ` at ${info.endpoint}` : ""}`;
}

/**
 * A failure of the connection itself, in three wordings: nothing answered (`model:network`, "could
 * not reach"); the connection was dropped before any of the answer reached the user, on every
 * attempt (`model:connection_lost`); or it was dropped after part of the answer was shown, which
 * is never retried because the text would be shown twice (`model:interrupted`).
 */
function transportError(err: unknown, t: TransportFailure, info: ModelInfo, call: CallFacts): QuarryError {
  const opts = { cause: err };
  const code = t.code ? ` (${t.code})` : "";
  if (call.streamed) {
    return new QuarryError(
      "model:interrupted",
      `The connection to ${where(info)} was cut in the middle of the answer${code}, so the answer above is ` +
        "incomplete. Quarry does not retry an answer that has started (you would see its text twice). Your " +
        "question is saved: ask again for the whole answer.",
      opts,
    );
  }
  if (t.kind === "unanswered") {
    return new QuarryError(
      "model:network",
      `Quarry could not reach ${where(info)}${code}. ` +
        (info.provider === "openai"
          ? "Check that the model server is running and QUARRY_OPENAI_BASE_URL is right, then ask again."
          : "Check the network connection, then ask again."),
      opts,
    );
  }
  const tries = (call.attempts ?? 1) > 1 ? `, ${call.attempts} times in a row` : "";
  // A library that kept the code tells a dropped connection apart; one that kept only words does not.
  const what = t.code
    ? `${where(info)} was reached but dropped the connection before its reply was complete${tries} (${t.code})`
    : `The connection to ${where(info)} failed before any answer arrived${tries}`;
  return new QuarryError(
    "model:connection_lost",
    `${what}. Your question is saved: ask again in a moment. If it keeps happening, the model service is ` +
      "overloaded or something between Quarry and it is dropping connections.",
    opts,
  );
}

/** Raised when the model answers nothing at all (no text, no tool call). */
export function emptyReplyError(info: ModelInfo, finishReason?: string): QuarryError {
  if (finishReason && /SAFETY|PROHIBITED|BLOCKLIST|SPII|RECITATION|content_filter/i.test(finishReason)) {
    return new QuarryError(
      "model:safety",
      "The model's safety filters blocked this question or its answer. Rephrase the question and ask again.",
    );
  }
  return new QuarryError(
    "model:empty",
    `${info.provider ? PROVIDER_NAMES[info.provider] : "The model"} (${info.model}) returned an empty reply` +
      `${finishReason ? ` (finish reason ${finishReason})` : ""}; its safety filters may have blocked it. ` +
      "Rephrase the question and ask again.",
  );
}
