/**
 * What the page and the API share, exported as `@quarry/functions/contract`: limits, error codes,
 * the run protocol's facts, and the events and results a run streams. Nothing here imports
 * anything, so the page bundles only these few constants.
 */
export * from "./access";
export * from "./admin";
export * from "./errors";
export * from "./events";
export * from "./follow-ups";
export * from "./limits";
export * from "./protocol";
