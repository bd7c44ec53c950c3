/**
 * The Firestore calls an in-process instance makes, counted on its Firestore client (every unary
 * and streaming RPC, when it started and ended), and the sequential round trips a run waits for
 * before its first answer token: `api-load`'s count, shared with `stream-size`.
 */
import { createRequire } from "node:module";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "../..");
const require = createRequire(import.meta.url);

export interface Rpc {
  at: number;
  end: number;
  method: string;
  toLog: boolean;
  heldBack: boolean;
  access: boolean;
  /** The threads the call names (its documents under `threads/` or `checkpoints/`). */
  threads: string[];
}

/**
 * Sequential round trips: the longest chain of calls each started after the one before it ended
 * (calls made side by side — the quota check beside the thread's read — count once).
 */
export function sequentialRoundTrips(rpcs: Rpc[]): number {
  const sorted = [...rpcs].sort((a, b) => a.at - b.at);
  const depth: number[] = [];
  sorted.forEach((r, i) => {
    depth[i] = 1 + Math.max(0, ...sorted.slice(0, i).map((p, j) => (p.end <= r.at ? depth[j] : 0)));
  });
  return Math.max(0, ...depth);
}

/**
 * The calls a run waits for among those made before its first token: not the cancel watch (a
 * Listen stream opened once the lease is taken and never waited for), nor the event log's
 * background writes, nor the checkpoint writes held back until the first token.
 */
export function awaitedCalls(before: Rpc[], threadId?: string): Rpc[] {
  return before.filter(
    (r) => r.method !== "listen" && !r.toLog && !r.heldBack && (!threadId || ofThread(r, threadId)),
  );
}

/**
 * Whether a call can be the given thread's: it names no other thread. Another run's calls made
 * meanwhile (a queued run's task delivered in the same window, say) are not this run's to wait for.
 */
function ofThread(r: Rpc, threadId: string): boolean {
  return r.threads.every((t) => t === threadId);
}

/**
 * Counts Firestore RPCs (unary and streaming) issued by this process's Firestore clients. Call it
 * before the function's code is loaded; the returned log grows with every call.
 */
export function countFirestoreRpcs(): Rpc[] {
  const { Firestore } = require(
    require.resolve("@google-cloud/firestore", { paths: [path.join(root, "functions")] }),
  );
  const log: Rpc[] = [];
  for (const name of ["request", "requestStream"] as const) {
    const original = Firestore.prototype[name];
    Firestore.prototype[name] = function (this: unknown, method: string, ...rest: unknown[]) {
      // A unary call's request comes first; a stream's after its `bidi` flag.
      const named = JSON.stringify(rest.find((a) => typeof a === "object" && a !== null) ?? {});
      const body = method === "commit" ? named : "";
      // The run's event log is written in the background, never awaited by the run.
      const toLog = /\/runs\/[^/]+\/log\//.test(body);
      // The access gate's and the quota's own calls (members list, usage and the questions window).
      const access = /\/documents\/(members|usage|quota_rate)\//.test(named);
      // The held-back checkpoint writes, which start flowing at the answer's first token (in the
      // same instant the client gets it): checkpoints only, no thread document (the lease's commit).
      const heldBack =
        !toLog && !access && method === "commit" && !/\/documents\/threads\/[^/"]+"/.test(body);
      const threads = [
        ...new Set([...named.matchAll(/\/documents\/(?:threads|checkpoints)\/([^/"]+)/g)].map((m) => m[1])),
      ];
      const rpc: Rpc = { at: performance.now(), end: Infinity, method, toLog, heldBack, access, threads };
      log.push(rpc);
      const done = () => (rpc.end = Math.min(rpc.end, performance.now()));
      const out = original.call(this, method, ...rest) as Promise<unknown>;
      // A unary call ends when it settles; a stream (runQuery, batchGetDocuments) when it ends.
      void Promise.resolve(out).then(
        (v) => {
          const s = v as { once?: (e: string, f: () => void) => void } | undefined;
          if (name === "requestStream" && typeof s?.once === "function") {
            s.once("end", done);
            s.once("close", done);
            s.once("error", done);
          } else done();
        },
        () => done(),
      );
      return out;
    };
  }
  return log;
}
