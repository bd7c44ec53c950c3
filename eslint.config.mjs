import js from "@eslint/js";
import tseslint from "typescript-eslint";

// Counted as written (comments and blank lines too), so the limit holds however it is counted.
const MAX_FUNCTION_LINES = { max: 80, skipBlankLines: false, skipComments: false };

export default tseslint.config(
  {
    ignores: ["**/node_modules/**", "functions/lib/**", "web/dist/**", "**/*.d.ts", ".firebase.stack-*"],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts", "**/*.tsx"],
    languageOptions: {
      parserOptions: {
        projectService: {
          allowDefaultProject: ["vitest.config.mts"],
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: { arguments: false } }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    // Only the config module reads the environment (langgraphjs' no-process-env, in core ESLint terms).
    files: ["functions/src/**/*.ts", "web/src/**/*.ts", "web/src/**/*.tsx"],
    ignores: ["functions/src/config/**"],
    rules: {
      "no-restricted-properties": [
        "error",
        {
          object: "process",
          property: "env",
          message: "Read configuration through functions/src/config/ (config()).",
        },
      ],
    },
  },
  {
    // Functions stay under ~80 lines (docs/architecture.md), in the functions and in the page; tests
    // are exempt (a scenario reads best in one piece).
    files: ["functions/src/**/*.ts", "web/src/**/*.ts", "web/src/**/*.tsx"],
    ignores: ["**/*.test.ts", "**/*.test.tsx"],
    rules: { "max-lines-per-function": ["error", MAX_FUNCTION_LINES] },
  },
  {
    files: ["web/src/**/*.ts", "web/src/**/*.tsx"],
    ignores: ["**/*.test.ts", "**/*.test.tsx"],
    rules: {
      // The page shares only the contract with the API; the rest of functions/src is server code.
      "no-restricted-imports": [
        "error",
        { patterns: [{ regex: "functions/src", message: 'Import from "@quarry/functions/contract".' }] },
      ],
    },
  },
  {
    files: ["**/*.mjs", "**/*.js"],
    languageOptions: {
      globals: {
        process: "readonly",
        console: "readonly",
        fetch: "readonly",
        AbortSignal: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        URL: "readonly",
        Buffer: "readonly",
      },
    },
  },
  {
    files: ["**/*.cjs"],
    languageOptions: {
      sourceType: "commonjs",
      globals: { require: "readonly", module: "writable", exports: "writable", process: "readonly" },
    },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
);
