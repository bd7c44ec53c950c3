import react from "@vitejs/plugin-react";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

export default defineConfig({
  plugins: [react()],
  resolve: {
    // npm hoists @firebase/auth to the root node_modules next to another firebase version, where
    // its @firebase/app peer would resolve to a second copy ("Component auth has not been
    // registered yet"). One copy of the app registry for every Firebase package.
    dedupe: ["@firebase/app", "@firebase/component"],
    // The contract the page shares with the API, from its source (no functions build needed first).
    alias: {
      "@quarry/functions/contract": fileURLToPath(
        new URL("../functions/src/contract/index.ts", import.meta.url),
      ),
    },
  },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    sourcemap: true,
    // Firebase + the LangGraph SDK make a ~650 kB entry; vega-embed is split out and loaded on demand.
    chunkSizeWarningLimit: 1000,
  },
  server: { host: "127.0.0.1" },
});
