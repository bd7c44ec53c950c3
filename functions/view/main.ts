/**
 * Quarry's MCP Apps view: connects to the host with the package's `App` and draws each tool result
 * it is sent (render.ts). Served as one self-contained HTML resource (`ui://quarry/result.html`).
 */
import { App, applyDocumentTheme, applyHostStyleVariables } from "@modelcontextprotocol/ext-apps";
import { render, resultOf } from "./render";

const root = document.getElementById("result")!;
const app = new App({ name: "Quarry result", version: "1.0.0" });
let dark = false;

function applyContext(): void {
  const ctx = app.getHostContext();
  if (ctx?.theme) {
    applyDocumentTheme(ctx.theme);
    dark = ctx.theme === "dark";
  }
  if (ctx?.styles?.variables) applyHostStyleVariables(ctx.styles.variables);
}

app.ontoolresult = (result) => {
  if (result.isError) {
    const text = result.content?.find((c) => c.type === "text");
    root.textContent = text && "text" in text ? String(text.text) : "The tool failed.";
    return;
  }
  void render(root, resultOf(result.structuredContent as Record<string, unknown> | undefined), dark);
};
app.onhostcontextchanged = () => applyContext();

app
  .connect()
  .then(applyContext)
  .catch((e: unknown) => {
    root.textContent = `Could not connect to the host: ${(e as Error).message}`;
  });
