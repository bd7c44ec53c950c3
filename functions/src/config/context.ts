/** The knowledge the prompts draw on: authored context files, the schema catalog, feedback. */
import path from "node:path";
import { docsOf, int, text, textOr, type Env } from "./define";

/** The context settings (part of `RuntimeConfig`). */
export interface ContextConfig {
  /** Folder of authored context files (`*.yaml`), deployed with the function. */
  contextDir: string;
  /** The schema catalog is rebuilt from warehouse metadata when older than this, minutes. */
  catalogMaxAgeMinutes: number;
  /** Firestore collection that shares the catalog across instances. */
  catalogsCollection: string;
  /** Firestore collection of answer feedback (server-side only). */
  feedbackCollection: string;
}

const concern = "context";

const CONTEXT_SETTINGS = {
  contextDir: text("QUARRY_CONTEXT_DIR", {
    concern,
    defaultText: "`functions/context`",
    description: "Folder of authored context files (`*.yaml`).",
  }),
  catalogMaxAgeMinutes: int("QUARRY_CATALOG_MAX_AGE_MINUTES", {
    concern,
    default: 60,
    description: "Age at which the schema catalog is rebuilt from warehouse metadata.",
  }),
  catalogsCollection: textOr("QUARRY_CATALOGS_COLLECTION", {
    concern,
    default: "catalogs",
    description: "The Firestore collection that shares the schema catalog.",
  }),
  feedbackCollection: textOr("QUARRY_FEEDBACK_COLLECTION", {
    concern,
    default: "feedback",
    description: "Firestore collection of answer feedback (server-side only).",
  }),
} as const;

/** The context settings from an environment. */
export function readContextConfig(env: Env): ContextConfig {
  const s = CONTEXT_SETTINGS;
  return {
    // functions/src/config/ and functions/lib/config/ both sit two levels below functions/.
    contextDir: s.contextDir.read(env) || path.resolve(__dirname, "..", "..", "context"),
    catalogMaxAgeMinutes: s.catalogMaxAgeMinutes.read(env),
    catalogsCollection: s.catalogsCollection.read(env),
    feedbackCollection: s.feedbackCollection.read(env),
  };
}

export const CONTEXT_DOCS = docsOf(CONTEXT_SETTINGS);
