import type { TestProject } from "vitest/node";
import { provideStack } from "./global-helpers";
import { startVertexStandin } from "./vertex-standin";
import { e2eScript } from "./e2e-script";
import { RETAIL_FILES } from "./investigation-script";
import { HOLD_URL_ENV, startHoldServer } from "./hold-control";
import { signUp, warmBlockingFunctions } from "./auth-emulator";
import { E2E_ACCESS_ENV, E2E_TEST_USER } from "./e2e-access";
import { jaffleFiles } from "./jaffle";
import { SLACK_TEST, SLACK_URL_ENV, startSlackStandin } from "./slack-standin";

/**
 * Browser tests: the whole local product as a newcomer with a Gemini API key runs it
 * (`GEMINI_API_KEY=… npm start`) — Firestore (with firestore.rules), functions, auth and hosting
 * emulators, the DuckDB sample warehouse, and the Gemini Developer API played by the loopback
 * Google stand-in (QUARRY_GEMINI_BASE_URL, its self-signed certificate trusted via
 * NODE_EXTRA_CA_CERTS; it refuses any other key). The integration tests run on Vertex AI's path.
 * Answer tokens are streamed with a small delay so a page can watch them; the hold control server
 * lets a test pause an answer midway (`[pause:<key>]`) and release it when it has looked.
 * Access is closed, as in a deployment (test/support/e2e-access.ts): the page's test user is created
 * here with a verified address and is the admin; other verified quarry.local addresses are members.
 */
export default async function setup(project: TestProject) {
  const key = "AIza-e2e-test-key";
  const holds = await startHoldServer();
  // Slack's Web API, for linking a Slack account through the page (slack-link.e2e.ts).
  const slack = await startSlackStandin();
  const standin = await startVertexStandin({
    script: e2eScript({ holds }),
    tokenDelayMs: 40,
    charsPerChunk: 12,
    apiKey: key,
  });
  // What the model was sent (GET /prompts?key=<marker>): attachments.e2e.ts reads the images.
  holds.recordPrompts(() => standin.requests.map((r) => JSON.stringify(r.body)));
  try {
    const teardown = await provideStack(project, {
      services: ["firestore", "functions", "auth", "hosting"],
      rules: "firestore.rules",
      env: {
        QUARRY_WAREHOUSE: "duckdb",
        // The public dbt fixture's tables beside the sample: context-imports.e2e.ts imports it; and the
        // investigations' planted-cause table (investigations.e2e.ts).
        QUARRY_DUCKDB_FILES: `${jaffleFiles()},${RETAIL_FILES}`,
        GEMINI_API_KEY: key,
        QUARRY_GEMINI_BASE_URL: `https://${standin.host}`,
        VERTEX_AI_EMULATOR_HOST: "",
        NODE_EXTRA_CA_CERTS: standin.certFile,
        ...E2E_ACCESS_ENV,
        QUARRY_SLACK: "true",
        QUARRY_SLACK_BOT_TOKEN: SLACK_TEST.botToken,
        QUARRY_SLACK_SIGNING_SECRET: SLACK_TEST.signingSecret,
        QUARRY_CHAT_LINK_KEY: SLACK_TEST.linkKey,
        QUARRY_SLACK_API_URL: `${slack.url}/api/`,
      },
      extraEnv: { [HOLD_URL_ENV]: holds.url, [SLACK_URL_ENV]: slack.url },
    });
    // "Continue as test user" then signs in to this verified account (it would otherwise create an
    // unverified one, which the closed policy refuses).
    const { urls } = project.getProvidedContext().stack;
    const testUser = () => signUp(urls.auth!, E2E_TEST_USER.email, { password: E2E_TEST_USER.password });
    await warmBlockingFunctions(urls.auth!, testUser).catch(async (err: unknown) => {
      await teardown();
      throw err;
    });
    return async () => {
      await holds.close();
      await teardown();
      await standin.stop();
      await slack.close();
    };
  } catch (err) {
    await holds.close();
    await standin.stop();
    await slack.close();
    throw err;
  }
}
