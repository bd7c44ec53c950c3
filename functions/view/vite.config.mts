/**
 * Builds the MCP Apps result view (`ui://quarry/result.html`) as one self-contained HTML file:
 * its script (with vega, vega-lite, vega-embed, vega-interpreter and the MCP Apps `App`) and its
 * styles inlined, so a host renders it without fetching anything. Written to `lib/mcp/view/`,
 * beside the compiled `mcp/apps.js` that serves it.
 */
import { fileURLToPath } from "node:url";
import { defineConfig, type Plugin } from "vite";

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** Moves the bundle's script and stylesheet into the HTML and drops the separate files. */
function inlineEverything(): Plugin {
  return {
    name: "quarry-inline-view",
    enforce: "post",
    generateBundle(_options, bundle) {
      const html = Object.values(bundle).find((f) => f.fileName.endsWith(".html"));
      if (!html || html.type !== "asset") throw new Error("the view's HTML is missing from the bundle");
      let text = String(html.source);
      for (const file of Object.values(bundle)) {
        const name = file.fileName.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        if (file.type === "chunk" && file.fileName.endsWith(".js")) {
          // "</script" inside the code would end the element early.
          const code = file.code.replace(/<\/script/gi, "<\\/script");
          const tag = new RegExp(`<script type="module"[^>]*src="[^"]*${name}"[^>]*></script>`);
          if (!tag.test(text)) throw new Error(`no script tag for ${file.fileName}`);
          text = text.replace(tag, () => `<script type="module">${code}</script>`);
          delete bundle[file.fileName];
        } else if (file.type === "asset" && file.fileName.endsWith(".css")) {
          const tag = new RegExp(`<link rel="stylesheet"[^>]*href="[^"]*${name}"[^>]*>`);
          text = text.replace(tag, () => `<style>${String(file.source)}</style>`);
          delete bundle[file.fileName];
        }
      }
      html.source = text;
    },
  };
}

export default defineConfig({
  root: here("."),
  base: "./",
  logLevel: "warn",
  plugins: [inlineEverything()],
  build: {
    outDir: here("../lib/mcp/view"),
    emptyOutDir: true,
    sourcemap: false,
    assetsInlineLimit: Number.MAX_SAFE_INTEGER,
    // Vega and Vega-Lite inlined make a ~1.5 MB page; it is read once per host and cached.
    chunkSizeWarningLimit: 4000,
    rolldownOptions: {
      input: here("result.html"),
      output: { codeSplitting: false },
    },
  },
});
