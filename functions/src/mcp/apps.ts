/**
 * MCP Apps (`@modelcontextprotocol/ext-apps`): the result view hosts that render MCP Apps show for
 * `ask` and `run_sql` — the rows as a table and the chart Quarry's page would draw, from the tool's
 * structured content. One `ui://` HTML resource, self-contained (its script, Vega, Vega-Lite and
 * vega-embed inlined at build time from `functions/view/`; it fetches nothing), linked from the
 * tools' `_meta.ui.resourceUri` with the package's helpers. Hosts without MCP Apps ignore the link
 * and read the same structured content and text.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";

/** The package's server helpers (ESM only: imported, not required, with the MCP SDK on first use). */
export type AppHelpers = typeof import("@modelcontextprotocol/ext-apps/server", {
  with: { "resolution-mode": "import" },
});

export function appHelpers(): Promise<AppHelpers> {
  return import("@modelcontextprotocol/ext-apps/server");
}

/** The result view's address, as tools link it and hosts read it. */
const RESULT_VIEW_URI = "ui://quarry/result.html";

/** What a tool's definition carries to link the result view (and the older hosts' flat key). */
export const RESULT_VIEW_META = {
  ui: { resourceUri: RESULT_VIEW_URI },
  "ui/resourceUri": RESULT_VIEW_URI,
} as const;

/** Where the build writes the view (`npm run build -w functions`: tsc, then Vite for `view/`). */
const VIEW_FILE = join(__dirname, "view", "result.html");

/** Self-contained: no network origins to allow; a border like the host's other cards. */
const VIEW_UI = { csp: { connectDomains: [], resourceDomains: [] }, prefersBorder: true };

/** The view as `resources/list` shows it (the SDK's resource metadata, which the helper passes on). */
const VIEW_LISTING = {
  title: "Quarry result",
  description: "The rows of an ask or run_sql result as a table, and the chart Quarry draws for them.",
  _meta: { ui: VIEW_UI },
};

let html: Promise<string> | undefined;

/** The view's HTML, read once per instance. */
function viewHtml(): Promise<string> {
  html ??= readFile(VIEW_FILE, "utf8").catch((err: unknown) => {
    html = undefined;
    throw new Error(`The MCP result view is not built (${VIEW_FILE}): run npm run build -w functions`, {
      cause: err,
    });
  });
  return html;
}

/** Registers the result view as a resource (listed, and read by hosts when a linked tool runs). */
export function registerResultView(apps: AppHelpers, server: McpServer): void {
  // The package's helpers are typed for the SDK's 2.x server; their calls are those of 1.x's McpServer.
  apps.registerAppResource(
    server as unknown as Parameters<AppHelpers["registerAppResource"]>[0],
    "Quarry result",
    RESULT_VIEW_URI,
    VIEW_LISTING,
    async () => ({
      contents: [
        {
          uri: RESULT_VIEW_URI,
          mimeType: apps.RESOURCE_MIME_TYPE,
          text: await viewHtml(),
          _meta: { ui: VIEW_UI },
        },
      ],
    }),
  );
}
