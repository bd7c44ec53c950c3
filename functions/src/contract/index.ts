/**
 * What the page and the API share, exported as `@quarry/functions/contract`: limits, error codes,
 * the run protocol's facts, the events and results a run streams, and how a result is charted
 * (pure functions the page and the MCP tools share). Nothing here imports a package.
 */
export * from "./access";
export * from "./admin";
export * from "./chart";
export * from "./chat";
export * from "./errors";
export * from "./events";
export * from "./follow-ups";
export * from "./investigations";
export * from "./limits";
export * from "./protocol";
export * from "./schedules";
export * from "./shares";
export * from "./tokens";
export * from "./uploads";
