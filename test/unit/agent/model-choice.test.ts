/** Which model provider runs, from configuration alone (agent/model/choose.ts), and the secret it deploys with. */
import { describe, expect, it } from "vitest";
import { functionSecrets, readConfig } from "../../../functions/src/config";
import { describeModel, resolveModel, type CredentialFacts } from "../../../functions/src/agent/model";
import { serviceMessage } from "../../../functions/src/agent/model/errors";

const none: CredentialFacts = { credentialsFileExists: false, adcFileExists: false, onGoogleCloud: false };
const choose = (env: Record<string, string>, facts = none) =>
  resolveModel(readConfig({ GOOGLE_CLOUD_PROJECT: "demo-quarry", ...env }).model, facts);

describe("model provider choice", () => {
  it("picks the only provider configured, with its default or configured model", () => {
    expect(choose({ GEMINI_API_KEY: "k" })).toMatchObject({
      ready: true,
      provider: "gemini",
      model: "gemini-2.5-flash",
    });
    expect(choose({ GOOGLE_API_KEY: "k", QUARRY_MODEL: "gemini-2.5-pro" })).toMatchObject({
      provider: "gemini",
      model: "gemini-2.5-pro",
    });
    expect(
      choose({ QUARRY_OPENAI_BASE_URL: "http://127.0.0.1:11434/v1", QUARRY_MODEL: "qwen2.5:7b" }),
    ).toMatchObject({
      provider: "openai",
      model: "qwen2.5:7b",
      endpoint: "http://127.0.0.1:11434/v1",
    });
    expect(choose({ VERTEX_AI_EMULATOR_HOST: "127.0.0.1:9" })).toMatchObject({ provider: "vertex" });
  });

  it("uses ambient Google credentials only when nothing is set on purpose", () => {
    expect(choose({}, { ...none, adcFileExists: true })).toMatchObject({
      provider: "vertex",
      reason: "Google credentials found",
    });
    expect(choose({}, { ...none, onGoogleCloud: true })).toMatchObject({ provider: "vertex" });
    // Deployed with a Gemini key: the key wins over the function's own service account.
    expect(choose({ GEMINI_API_KEY: "k" }, { ...none, onGoogleCloud: true })).toMatchObject({
      provider: "gemini",
    });
  });

  it("asks which one when two are set on purpose, and QUARRY_MODEL_PROVIDER settles it", () => {
    const both = { GEMINI_API_KEY: "k", QUARRY_OPENAI_BASE_URL: "http://127.0.0.1:1/v1", QUARRY_MODEL: "m" };
    const s = choose(both);
    expect(s).toMatchObject({ ready: false, error: "model:not_configured" });
    expect(describeModel(s)).toMatch(/Several model providers.*QUARRY_MODEL_PROVIDER=gemini\|openai/);
    expect(choose({ ...both, QUARRY_MODEL_PROVIDER: "openai" })).toMatchObject({
      ready: true,
      provider: "openai",
    });
  });

  it("says exactly what is missing", () => {
    const msg = (env: Record<string, string>, facts = none) => describeModel(choose(env, facts));
    expect(msg({})).toMatch(/No AI model is configured.*GEMINI_API_KEY.*QUARRY_OPENAI_BASE_URL.*gcloud auth/);
    expect(msg({ QUARRY_OPENAI_BASE_URL: "http://127.0.0.1:1/v1" })).toMatch(
      /Set QUARRY_MODEL to a model your/,
    );
    expect(msg({ QUARRY_OPENAI_BASE_URL: "localhost:11434", QUARRY_MODEL: "m" })).toMatch(
      /must be an http\(s\) URL/,
    );
    expect(msg({ QUARRY_MODEL_PROVIDER: "gemini" })).toMatch(
      /QUARRY_MODEL_PROVIDER=gemini: .*set GEMINI_API_KEY/,
    );
    expect(
      msg({ GOOGLE_APPLICATION_CREDENTIALS: "/nope.json" }, { ...none, credentialsFile: "/nope.json" }),
    ).toMatch(/points to \/nope\.json, which does not exist/);
    const status = choose({});
    expect(status.ready).toBe(false);
    expect(!status.ready && status.setup.map((o) => o.provider)).toEqual(["gemini", "openai", "vertex"]);
  });

  it("refuses an unknown QUARRY_MODEL_PROVIDER", () => {
    expect(() => readConfig({ GOOGLE_CLOUD_PROJECT: "p", QUARRY_MODEL_PROVIDER: "claude" })).toThrow(
      /QUARRY_MODEL_PROVIDER must be one of vertex, gemini, openai/,
    );
  });

  it("mounts the Gemini key secret only for a deploy that chose Gemini", () => {
    expect(functionSecrets({ QUARRY_MODEL_PROVIDER: "gemini" }).map((s) => s.name)).toEqual([
      "GEMINI_API_KEY",
    ]);
    expect(functionSecrets({})).toEqual([]);
    // The emulator reads the key from the environment; a declared secret would send it to Secret Manager.
    expect(functionSecrets({ QUARRY_MODEL_PROVIDER: "gemini", FUNCTIONS_EMULATOR: "true" })).toEqual([]);
  });
});

describe("the model service's own words in messages", () => {
  it("reads each client library's error shape", () => {
    // @google/generative-ai
    expect(
      serviceMessage(
        new Error(
          "[GoogleGenerativeAI Error]: Error fetching from https://x/v1beta/models/m:streamGenerateContent?alt=sse: " +
            '[429 Too Many Requests] Resource has been exhausted (e.g. check quota). [{"@type":"x"}]',
        ),
      ),
    ).toBe("Resource has been exhausted (e.g. check quota).");
    // @langchain/google-common (Vertex AI)
    expect(
      serviceMessage(
        new Error(
          'Google request failed with status code 400: {"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT"}}',
        ),
      ),
    ).toBe("Request contains an invalid argument.");
    // openai
    expect(serviceMessage(new Error("429 Rate limit reached for requests"))).toBe(
      "Rate limit reached for requests",
    );
  });
});
