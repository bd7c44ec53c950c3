import type { TestProject } from "vitest/node";
import { freePort } from "../../scripts/stack.mjs";
import { apiScript } from "./api-script";
import { INTEGRATION_ACCESS_ENV, MEMBER_DOMAIN, warmBlockingFunctions } from "./auth-emulator";
import { startFaultProxy } from "./fault-proxy";
import { provideStack } from "./global-helpers";
import { HOLD_URL_ENV, startHoldServer } from "./hold-control";
import { startVertexStandin } from "./vertex-standin";
import { SLACK_TEST, SLACK_URL_ENV, startSlackStandin } from "./slack-standin";
import { GOOGLE_CHAT_AUDIENCE, GOOGLE_CHAT_URL_ENV, startGoogleChatStandin } from "./google-chat-standin";
import { FINANCE_SALARIES_CSV } from "./finance";
import { jaffleFiles } from "./jaffle";

/**
 * Integration tests: Firestore (Java) + functions + auth emulators on free ports, the DuckDB sample
 * warehouse, and the loopback Vertex AI stand-in (trusted through NODE_EXTRA_CA_CERTS). The function
 * reaches Firestore through a fault-injecting proxy (tests can cut it); tests themselves talk to the
 * emulator directly. The stand-in's script can hold a model call until a test releases it (the hold
 * control server, `hold-control.ts`), so tests stop a run at a known point instead of sleeping.
 */
export default async function setup(project: TestProject) {
  const firestorePort = await freePort();
  const proxy = await startFaultProxy("127.0.0.1", firestorePort);
  const holds = await startHoldServer();
  // Slack's Web API, for the Slack app's tests (test/integration/chat).
  const slack = await startSlackStandin();
  const googleChat = await startGoogleChatStandin();
  const standin = await startVertexStandin({
    script: apiScript({ holds }),
    tokenDelayMs: 5,
    charsPerChunk: 16,
  });
  // Tests read what the model was shown (scope: nothing outside a person's scope reaches a prompt).
  holds.recordPrompts(() => standin.requests.map((r) => JSON.stringify(r.body)));
  holds.recordCalls(() => standin.arrivals);
  try {
    const teardown = await provideStack(project, {
      services: ["firestore", "functions", "auth"],
      ports: {
        firestore: firestorePort,
        functions: "auto",
        auth: "auto",
        hub: "auto",
        logging: "auto",
        eventarc: "auto",
        tasks: "auto",
      },
      env: {
        QUARRY_WAREHOUSE: "duckdb",
        // A second dataset beside the sample's `shop`, so scope can be tried (scope.int.ts), and the
        // public dbt fixture's tables, which context-imports.int.ts imports through the API. (12 tables
        // in all: up to 12 every table is in the prompt, past it linking picks; scope.int.ts relies on
        // the first. investigations.int.ts brings its table as an upload of its conversation.)
        QUARRY_DUCKDB_FILES: `finance.salaries=${FINANCE_SALARIES_CSV},${jaffleFiles()}`,
        QUARRY_RUN_LEASE_SECONDS: "10",
        // OAuth for hosted MCP clients (mcp-oauth.int.ts); its signing key is made and kept in Firestore.
        QUARRY_MCP_OAUTH: "true",
        // The closed access policy: verified addresses of the test users' domain are members.
        ...INTEGRATION_ACCESS_ENV,
        // The Slack app (chat/), its Web API the loopback stand-in.
        QUARRY_SLACK: "true",
        QUARRY_SLACK_BOT_TOKEN: SLACK_TEST.botToken,
        QUARRY_SLACK_SIGNING_SECRET: SLACK_TEST.signingSecret,
        QUARRY_CHAT_LINK_KEY: SLACK_TEST.linkKey,
        QUARRY_SLACK_API_URL: `${slack.url}/api/`,
        // The Google Chat app: tokens verified with the stand-in's certificates, its API the stand-in.
        QUARRY_GOOGLE_CHAT: "true",
        QUARRY_GOOGLE_CHAT_AUDIENCE: GOOGLE_CHAT_AUDIENCE,
        QUARRY_GOOGLE_CHAT_CERTS_URL: `${googleChat.url}/certs`,
        QUARRY_GOOGLE_CHAT_API_URL: `${googleChat.url}/`,
        // The member domain's verified accounts are linked by the email Chat gives (google-chat.int.ts).
        QUARRY_GOOGLE_CHAT_TRUSTED_DOMAINS: MEMBER_DOMAIN,
        VERTEX_AI_EMULATOR_HOST: standin.host,
        NODE_EXTRA_CA_CERTS: standin.certFile,
      },
      functionsEnv: { FIRESTORE_EMULATOR_HOST: proxy.address },
      extraEnv: {
        QUARRY_TEST_FAULT_URL: proxy.controlUrl,
        [HOLD_URL_ENV]: holds.url,
        [SLACK_URL_ENV]: slack.url,
        [GOOGLE_CHAT_URL_ENV]: googleChat.url,
        // For tests that run the function's app in their own process (disconnect.int.ts).
        QUARRY_TEST_VERTEX_HOST: standin.host,
        QUARRY_TEST_VERTEX_CERT: standin.certFile,
      },
    });
    await warmBlockingFunctions(project.getProvidedContext().stack.urls.auth!).catch(async (err: unknown) => {
      await teardown();
      throw err;
    });
    return async () => {
      await holds.close(); // a run still held gets its error now, not at the hold's timeout
      await teardown();
      await standin.stop();
      await slack.close();
      await googleChat.close();
      await proxy.close();
    };
  } catch (err) {
    await holds.close();
    await standin.stop();
    await slack.close();
    await googleChat.close();
    await proxy.close();
    throw err;
  }
}
