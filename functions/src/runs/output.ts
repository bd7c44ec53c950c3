/**
 * What a run writes its events to. The run core never knows which channel started it: the HTTP
 * API streams them (http/sse.ts), MCP's `ask` collects them (mcp/ask.ts), and a run nobody
 * streams (background, scheduled) writes them nowhere — its event log still has every one.
 */
/** Where a run's events go: an SSE stream, or nowhere (a run nobody streams; its log still has them). */
export interface RunOutput {
  open(headers: Record<string, string>): void;
  sendJson(event: string, json: string, id?: number): void;
  send(event: string, data: unknown, id?: number): void;
  end(): void;
  /** `cb` runs if the client goes away before `end()`. */
  onDisconnect(cb: () => void): void;
}

/** The output of a run that no client streams. */
export const NO_OUTPUT: RunOutput = {
  open: () => {},
  sendJson: () => {},
  send: () => {},
  end: () => {},
  onDisconnect: () => {},
};
