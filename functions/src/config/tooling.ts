/**
 * Variables read outside the function — by the page's Vite build, the launcher (`scripts/stack.mjs`),
 * the test harness (`test/support/`) and CI (`.ci/run`) — declared here so the configuration page
 * lists every variable and the doc check knows each one.
 */
import { documented } from "./define";

const web = { concern: "web", scope: "web" } as const;
const tooling = { concern: "tooling", scope: "tooling" } as const;

export const TOOLING_DOCS = [
  documented("VITE_QUARRY_API_URL", {
    ...web,
    defaultText: "from `/api/client-config`",
    description: "`vite dev` only: the API URL (otherwise the page asks the server).",
  }),
  documented("VITE_QUARRY_PROJECT_ID", {
    ...web,
    defaultText: "from `/api/client-config`",
    description: "`vite dev` only: the project id.",
  }),
  documented("VITE_QUARRY_REGION", {
    ...web,
    defaultText: "`us-central1`",
    description: "`vite dev` only: the functions' region (for the default API URL).",
  }),
  documented("VITE_QUARRY_AUTH_EMULATOR_URL", {
    ...web,
    defaultText: "from `/api/client-config`",
    description: "`vite dev` only: the Auth emulator's URL.",
  }),
  documented("VITE_QUARRY_FIRESTORE_EMULATOR_HOST", {
    ...web,
    defaultText: "from `/api/client-config`",
    description: "`vite dev` only: the Firestore emulator's `host:port`.",
  }),
  documented("QUARRY_FIRESTORE_EMULATOR_BIN", {
    ...tooling,
    defaultText: "the preinstalled path",
    description: "Where the launcher finds `cloud_firestore_emulator`.",
  }),
  documented("QUARRY_CHROMIUM", {
    ...tooling,
    defaultText: "unset",
    description: "Browser tests: a Chromium or Chrome to use.",
  }),
  documented("QUARRY_BROWSER", {
    ...tooling,
    type: "one of `bundled`, `system`",
    defaultText: "unset",
    description:
      "Browser tests: force the Chromium of `@sparticuz/chromium` (`bundled`) or `/usr/bin/chromium` (`system`).",
  }),
  documented("QUARRY_STACK_LOG", {
    ...tooling,
    defaultText: "unset",
    description: "Tests: a file that keeps the emulators' output, for debugging.",
  }),
  documented("QUARRY_STACK_TAG", {
    ...tooling,
    defaultText: "set by `.ci/run`",
    description: "CI: tags every emulator process so leftovers can be found and stopped.",
  }),
  documented("QUARRY_TEST_FAULT_URL", {
    ...tooling,
    defaultText: "set by the test stack",
    description: "Tests: the fault proxy's control URL, handed to the test processes.",
  }),
  documented("QUARRY_TEST_HOLD_URL", {
    ...tooling,
    defaultText: "set by the test stack",
    description: "Tests: the hold server's URL (a run held at a scripted point).",
  }),
  documented("QUARRY_TEST_SLACK_URL", {
    ...tooling,
    defaultText: "set by the test stack",
    description: "Tests: the Slack Web API stand-in's base URL, where tests read what the Slack app posted.",
  }),
  documented("QUARRY_TEST_GOOGLE_CHAT_URL", {
    ...tooling,
    defaultText: "set by the test stack",
    description:
      "Tests: the Google Chat stand-in's base URL (its token signer and the messages the app posted).",
  }),
  documented("QUARRY_TEST_VERTEX_HOST", {
    ...tooling,
    defaultText: "set by the test stack",
    description: "Tests: the Vertex AI stand-in's `host:port`, handed to in-process apps.",
  }),
  documented("QUARRY_TEST_VERTEX_CERT", {
    ...tooling,
    defaultText: "set by the test stack",
    description: "Tests: the Vertex AI stand-in's certificate file.",
  }),
];
