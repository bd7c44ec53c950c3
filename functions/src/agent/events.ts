/**
 * Custom stream events (LangGraph `custom` stream mode, written through the graph's stream writer).
 * Their types are part of the page's contract (`functions/src/contract/events.ts`).
 */
export type { Phase, QuarryEvent, Usage } from "../contract/events";
