/**
 * Connection behaviour the model and warehouse stand-ins share with real servers: idle keep-alive
 * connections are closed by the server without notice (no `Keep-Alive: timeout` hint, as Google's
 * front ends, load balancers and many model servers do), and a request can be dropped with a TCP
 * reset before or during its response, the way an overloaded server or a proxy drops it. Clients
 * that reuse a pooled connection the server has just closed see exactly what they see in
 * production: `other side closed` (UND_ERR_SOCKET) or ECONNRESET.
 */
import type { Server as HttpServer, ServerResponse } from "node:http";
import type { Server as HttpsServer } from "node:https";
import type { Socket } from "node:net";

/** How long a stand-in keeps an idle connection open, unless told otherwise (real servers: 5 s to minutes). */
export const STANDIN_IDLE_CLOSE_MS = 1_000;

/** Counts of what the server did to its connections. */
export interface ConnectionStats {
  /** Connections accepted. */
  opened: number;
  /** Idle connections the server closed. */
  idleClosed: number;
  /** Requests dropped (reset or closed) before their response was complete. */
  dropped: number;
}

/**
 * Closes each connection that has had no request in flight for `idleMs` (FIN, no hint), and
 * disables Node's own keep-alive timer, which would announce its timeout in a header.
 */
export function closeIdleConnections(
  server: HttpServer | HttpsServer,
  idleMs: number,
  stats: ConnectionStats,
  secure: boolean,
) {
  server.keepAliveTimeout = 0;
  const inFlight = new WeakMap<Socket, number>();
  const timers = new WeakMap<Socket, NodeJS.Timeout>();
  const idle = (socket: Socket) => {
    clearTimeout(timers.get(socket));
    if ((inFlight.get(socket) ?? 0) > 0 || socket.destroyed) return;
    const t = setTimeout(() => {
      if ((inFlight.get(socket) ?? 0) === 0 && !socket.destroyed) {
        stats.idleClosed++;
        socket.destroy();
      }
    }, idleMs);
    t.unref();
    timers.set(socket, t);
  };
  server.on(secure ? "secureConnection" : "connection", (socket: Socket) => {
    stats.opened++;
    idle(socket);
  });
  server.on("request", (req: { socket: Socket }, res: ServerResponse) => {
    const socket = req.socket;
    clearTimeout(timers.get(socket));
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    res.once("close", () => {
      inFlight.set(socket, Math.max(0, (inFlight.get(socket) ?? 1) - 1));
      idle(socket);
    });
  });
}

/**
 * Drops the connection a response goes out on: `reset` sends a TCP reset (through TLS, on its TCP
 * socket); `close` closes it as an idle keep-alive connection is closed (FIN).
 */
export function dropConnection(res: ServerResponse, how: "reset" | "close", stats: ConnectionStats): void {
  stats.dropped++;
  const socket = res.socket as (Socket & { _parent?: Socket }) | null;
  const tcp = socket?._parent ?? socket;
  if (how === "reset" && tcp?.resetAndDestroy) tcp.resetAndDestroy();
  else socket?.destroy();
}
