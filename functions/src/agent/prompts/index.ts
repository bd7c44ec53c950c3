/** Prompt templates, as data. Nodes fill them with variables from `context/` builders. */
export * from "./system";
export * from "./planner";
export * from "./generator";
export * from "./summarizer";
export * from "./adequacy";
export * from "./investigation";
export { fill } from "./template";
