/**
 * What a result's chart is, decided from what its columns mean, and its Vega-Lite spec: shared by
 * the page (which draws it) and the MCP tools (which send it with the rows). Pure; no I/O.
 */
export * from "./columns";
export * from "./numbers";
export * from "./time";
export * from "./chart";
export * from "./chart-spec";
