import type { Response } from "express";
import type { RunOutput } from "../runs/output";

/**
 * Comment heartbeats keep proxies and the client from timing out an idle stream, and let a client
 * notice a stream that went silent without closing (its instance stopped behind a proxy that keeps
 * the connection): the SDK reconnects once it missed three heartbeats (at least 6 s) — to the
 * run's log, where a continued run goes on (docs/runs.md, "What survives what").
 */
const HEARTBEAT_MS = 2_000;

/**
 * A Server-Sent Events writer for an express response: named events with JSON data, comment
 * heartbeats, and writes that become no-ops once the client is gone.
 */
export class SseWriter implements RunOutput {
  private heartbeat: NodeJS.Timeout | undefined;
  private closed = false;
  private opened = false;

  constructor(private readonly res: Response) {}

  open(headers: Record<string, string>): void {
    this.res.status(200);
    this.res.set({
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-cache, no-transform",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
      ...headers,
    });
    this.res.flushHeaders();
    this.opened = true;
    this.heartbeat = setInterval(() => this.comment("heartbeat"), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  onDisconnect(cb: () => void): void {
    this.res.on("close", () => {
      if (!this.res.writableEnded) cb();
    });
  }

  get isOpen(): boolean {
    return this.opened && !this.closed && !this.res.writableEnded && !this.res.destroyed;
  }

  /** Sends one event; `id` (the run's event id) lets the client resume after it (`Last-Event-ID`). */
  send(event: string, data: unknown, id?: number): void {
    this.sendJson(event, JSON.stringify(data), id);
  }

  /** `send` with the data already serialized (shared with the run's log: serialized once). */
  sendJson(event: string, json: string, id?: number): void {
    if (!this.isOpen) return;
    this.res.write(`${id === undefined ? "" : `id: ${id}\n`}event: ${event}\ndata: ${json}\n\n`);
  }

  comment(text: string): void {
    if (!this.isOpen) return;
    this.res.write(`: ${text}\n\n`);
  }

  end(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (!this.closed && !this.res.writableEnded) this.res.end();
    this.closed = true;
  }
}
