/**
 * Runs one turn of the graph into a RunOutput (an SSE response, or nothing for runs nobody
 * streams), in four steps a reader can follow top to bottom:
 *
 * 1. **start** — the graph starts, and nothing is sent until the lease is ours (a run that loses
 *    the race still gets an HTTP 409); the chunks it streams meanwhile wait.
 * 2. **follow** — each chunk becomes protocol events (RunTranscript), sent to the client and the
 *    run's log, and a phase boundary stores the run's progress with the log.
 * 3. **fail** — an error is shown in the stream once it is open, or thrown as an HTTP error before.
 * 4. **finish** — what the run keeps is written (a stopped answer, its checkpoints, the log's end
 *    marker), then the lease is released and the response ended, always — even when Firestore
 *    stops answering, since every wait on it is bounded.
 *
 * Why a run stopped early is decided once (RunStop); how it ended follows from it (outcomeOf).
 */
import * as logger from "firebase-functions/logger";
import type { ErrorBody } from "../contract/errors";
import { GRAPH_MODE, runStatusOf, type RunOutcome, type StreamMode } from "../contract/protocol";
import { toErrorBody } from "../errors";
import type { QuarryGraph } from "../agent/index.js";
import { RunStop, type StopReason } from "./abort";
import type { RunOutput } from "./output";
import { isAlreadyExists, isStale, storageError, within } from "../storage";
import { threadValues, type UsageTotals } from "./thread-doc";
import { toPlain } from "./serialize";
import type { MarkedEnd, RunStore } from "./run-store";
import type { RunCheckpointer } from "./checkpointer";
import type { LogCommit, RunLogWriter } from "./event-log";
import type { WriteBatch } from "firebase-admin/firestore";
import type { ChargeWrite } from "../access/quota";
import { config } from "../config";
import { RunLease } from "./lease";
import { keepStoppedAnswer } from "./stopped";
import { RunTranscript, type Chunk } from "./transcript";
import { DurableRun, type Durability } from "./durable";
import { PERSON_KEY, type RunPerson } from "../tools/person";

export interface RunSpec {
  threadId: string;
  uid: string;
  runId: string;
  leaseMs: number;
  modes: StreamMode[];
  /**
   * A new question, or the answer to the question the thread is waiting on; `rerun` runs on from
   * the checkpoint without input (a rerun, or a continuation from the run's progress).
   */
  input:
    | { type: "human"; content: unknown; id: string; investigate?: boolean }
    | { resume: string }
    | { rerun: true };
  checkpointId?: string;
  cancelOnDisconnect: boolean;
  /** The run's event log, for clients that rejoin the stream (ids on every event). */
  log?: RunLogWriter;
  /** Who asks and what they may still bill today (the warehouse refuses a query over it). */
  /** Who the run is for (email, budget, scope): the graph's `configurable.quarry_person`. */
  person?: RunPerson;
  /** Which attempt of the run this is and where its progress goes (runs/durable.ts); absent: not durable. */
  durable?: Durability;
  /**
   * The charge of what the turn spent, written with the run's release (once, with its end mark;
   * not by an attempt a continuation took over, which charges the turn itself). Undefined when
   * nothing was spent.
   */
  charge: (spent: { bytes: number; tokens: number }) => ChargeWrite | undefined;
}

/** How a run ended (after it held the lease), and the error shown if it failed. */
export interface RunResult {
  status: RunOutcome;
  error?: ErrorBody;
  /** What the run spent (the turn's usage). */
  usage: Partial<UsageTotals>;
  /** Let go to a task (its client left for good): the continuation finishes, charges and reports it. */
  handedOver?: boolean;
}

/** How a run ended, from why it stopped early (if it did), whether it failed, and whether it asked. */
export function outcomeOf(why: StopReason | undefined, failed: boolean, asking: boolean): RunOutcome {
  if (why === "cancelled" || why === "disconnected") return "cancelled";
  if (failed) return "error";
  return asking ? "interrupted" : "success";
}

/** Runs the turn `spec` on `graph` (built on `saver`) into `out`. Throws (an HTTP error) only before the stream opens. */
export async function executeRun(
  out: RunOutput,
  store: RunStore,
  saver: RunCheckpointer,
  graph: QuarryGraph,
  spec: RunSpec,
): Promise<RunResult> {
  return new Execution(out, store, saver, graph, spec).run();
}

class Execution {
  private readonly stop = new RunStop();
  private readonly transcript: RunTranscript;
  private readonly lease: RunLease;
  private chunks: AsyncIterator<Chunk> | undefined;
  /** The next chunk asked for and not handled yet. */
  private next: Promise<IteratorResult<Chunk>> | undefined;
  private leased = false;
  private failed = false;
  private shownError: ErrorBody | undefined;
  private readonly durable: DurableRun | undefined;

  constructor(
    private readonly out: RunOutput,
    private readonly store: RunStore,
    private readonly saver: RunCheckpointer,
    private readonly graph: QuarryGraph,
    private readonly spec: RunSpec,
  ) {
    this.transcript = new RunTranscript(spec.modes);
    this.lease = new RunLease(store, saver, { ...spec, attempt: spec.durable?.attempt ?? 0 });
    this.durable =
      spec.durable && new DurableRun(store, saver, spec, spec.durable, () => this.stop.stop("handed-over"));
    out.onDisconnect(() => {
      if (spec.cancelOnDisconnect) this.stop.stop("disconnected");
      else this.durable?.clientLeft();
    });
    saver.onFailure = (err) => {
      logger.warn("checkpoint write failed", {
        threadId: spec.threadId,
        runId: spec.runId,
        err: String(err),
      });
      this.stop.stop("storage-lost");
    };
  }

  async run(): Promise<RunResult> {
    try {
      const early = await this.start();
      this.leased = true;
      this.lease.hold(
        () => this.stop.stop("cancelled"),
        () => this.stop.stop("lease-lost"),
      );
      this.open();
      early.forEach((c) => this.handle(c));
      await this.follow();
    } catch (err) {
      await this.fail(err);
    } finally {
      this.lease.unhold();
      if (this.stop.why) this.chunks?.return?.().catch(() => {});
      if (this.leased) await this.finish();
    }
    const status = outcomeOf(this.stop.why, this.failed, this.transcript.asking);
    return {
      status,
      usage: this.transcript.usage,
      ...(this.shownError ? { error: this.shownError } : {}),
      ...(this.stop.why === "handed-over" ? { handedOver: true } : {}),
    };
  }

  /** Starts the graph and waits for the lease, keeping the chunks streamed meanwhile. */
  private async start(): Promise<Chunk[]> {
    const agent = await import("../agent/index.js");
    const stream = await this.graph.stream(
      ...graphArgs(agent, this.spec, this.saver.holdBack, this.stop.signal),
    );
    this.chunks = (stream as AsyncIterable<Chunk>)[Symbol.asyncIterator]();
    const taken = this.lease.taken().then(() => undefined);
    taken.catch(() => {}); // observed through the race below, or no longer of interest
    const early: Chunk[] = [];
    for (this.next = this.chunks.next(); ; this.next = this.chunks.next()) {
      const r = await this.stop.race(Promise.race([taken, this.next]));
      if (r === undefined) return early;
      if (r.done) {
        if (!this.saver.firstPutMade) throw new Error("the run ended before storing its first checkpoint");
        await this.stop.race(this.saver.started);
        this.next = undefined;
        return early;
      }
      early.push(r.value);
    }
  }

  /** Handles chunks until the graph ends; raced with the stop, so a graph stuck on Firestore cannot hold the response. */
  private async follow(): Promise<void> {
    while (this.next) {
      const r = await this.stop.race(this.next);
      if (r.done) return;
      this.handle(r.value);
      this.next = this.chunks!.next();
    }
  }

  private handle(chunk: Chunk): void {
    for (const step of this.transcript.steps(chunk)) {
      if ("send" in step) this.send(step.send, step.data);
      else if (this.durable) this.durable.boundary(this.spec.log, step.step);
      else this.spec.log?.boundary();
    }
  }

  /** Every event goes to the client and, with its id, to the run's log; serialized once for both. */
  private send(event: string, data: unknown): void {
    if (event === "error") this.shownError = data as ErrorBody;
    const json = JSON.stringify(data);
    this.out.sendJson(event, json, this.spec.log?.appendJson(event, json, data));
  }

  private open(): void {
    const path = `/threads/${this.spec.threadId}/runs/${this.spec.runId}`;
    // Location tells the SDK where to rejoin the stream: only when there is a log to rejoin from.
    this.out.open({ "Content-Location": path, ...(this.spec.log ? { Location: `${path}/stream` } : {}) });
    this.send("metadata", { run_id: this.spec.runId, attempt: (this.spec.durable?.attempt ?? 0) + 1 });
  }

  private async fail(err: unknown): Promise<void> {
    const why = this.stop.why;
    const { threadId, runId } = this.spec;
    if (!this.leased) return this.failBeforeStart(err, why);
    if (why === "handed-over") return;
    if (this.stop.byPerson) {
      logger.info("run stopped", { threadId, runId, why });
      return;
    }
    this.failed = true;
    const shown = why === "lease-lost" || why === "storage-lost" ? storageError(err, true) : err;
    const { body, expected } = toErrorBody(shown);
    if (!expected) logger.error("run failed", { threadId, runId, err: String((err as Error)?.stack ?? err) });
    this.send("error", body);
  }

  /**
   * Refused before the stream opened (409, 404, storage): an HTTP error, once the graph stops —
   * unless the lease (and the user's message) landed after all: then the run is reported in a
   * stream and released like any other.
   */
  private async failBeforeStart(err: unknown, why: StopReason | undefined): Promise<void> {
    this.stop.stop("not-started");
    this.leased = await this.lease.landedAfter(Promise.resolve(this.chunks?.return?.()));
    if (!this.leased) {
      this.lease.abandon();
      throw why === "disconnected" ? err : storageError(err);
    }
    if (why === "disconnected") return;
    this.failed = true;
    this.open();
    this.send("error", toErrorBody(err).body);
  }

  /**
   * Writes what the run keeps, then releases the lease — before the stream ends, so a client that
   * sees the end can start the next turn at once. A write still in flight when its bound runs out
   * may land late; nothing queued after it does.
   */
  private async finish(): Promise<void> {
    if (this.stop.why === "handed-over") {
      // A task continues it from the progress stored at its last boundary: nothing more of this
      // attempt is written once that is stored and the lease let go.
      this.saver.close(new Error("the run was handed to a task"));
      await within(this.spec.leaseMs / 2, this.durable!.handedOff!, "handing the run to a task").catch(
        () => {},
      );
      return this.out.end();
    }
    try {
      // A lost lease may already be someone else's: nothing more of this run is written then.
      if (this.stop.why === "lease-lost") this.saver.close(new Error("the run lost its lease"));
      else {
        await this.keepStoppedAnswer();
        const logged = this.spec.log?.endsSoon();
        // Only an order, so a log write that is slow or failed delays the end (bounded), never fails it.
        if (this.durable && logged)
          await within(this.spec.leaseMs / 2, logged, "writing the run's event log").catch(() => {});
        const last = this.saver.drain(this.durable?.final());
        await within(this.spec.leaseMs / 2, last, "writing the run's checkpoints");
      }
    } catch (err) {
      if (!this.failed) this.send("error", toErrorBody(storageError(err, true)).body);
      this.failed = true;
    }
    this.saver.close(new Error("the run released its lease"));
    const outcome = outcomeOf(this.stop.why, this.failed, this.transcript.asking);
    const threadStatus = this.failed ? "error" : this.transcript.asking ? "interrupted" : "idle";
    const said = this.transcript.conversation;
    const values = said && threadValues(toPlain(said) as unknown[]);
    const usage = this.transcript.usage;
    const end: Omit<MarkedEnd, "attempt"> = {
      status: threadStatus,
      outcome,
      usage,
      ...(values ? { values } : {}),
      charge: this.spec.charge({ bytes: usage.bytesBilled ?? 0, tokens: usage.totalTokens ?? 0 }),
      markTtlMs: config().runLogTtlMs,
    };
    const heldToEnd = this.stop.why !== "lease-lost";
    // The run's last event says how it ended, so a client need not ask (the SDK asks for the run
    // after a stream with a Location that ends without it). Logged with the end marker, so a
    // rejoined stream ends with it too; the stream itself ends only after the release. Not after a
    // lost lease: whoever holds the run now ends it.
    if (heldToEnd) this.send("end", { run_id: this.spec.runId, status: runStatusOf(outcome) });
    // The release, its end mark and the charge ride with the log's end marker when they can (one
    // commit); otherwise the release reads the thread again and writes them in a transaction.
    const rode = await this.closeLog(outcome, heldToEnd ? this.lease.releaseAlong(end) : undefined);
    // Whichever commit lands first writes the end mark; the others find it and write nothing.
    if (rode !== "landed" && (await this.lease.releaseMarked(end)) === undefined) {
      await this.lease.chargeMarked(end); // the release could not be written: the charge, once
    }
    this.out.end();
  }

  /** What the person saw of an answer they stopped stays in the thread. */
  private async keepStoppedAnswer(): Promise<void> {
    const partial = this.transcript.answerSoFar;
    if (!this.stop.byPerson || !partial?.text.trim()) return;
    const { threadId, runId, leaseMs } = this.spec;
    const stopped = keepStoppedAnswer(this.graph, threadId, partial, this.chunks);
    await within(leaseMs / 2, stopped, "storing the stopped answer").catch((err: unknown) =>
      logger.warn("stopped answer not stored", { threadId, runId, err: String(err) }),
    );
  }

  /**
   * The log's end marker goes before the release, or with it (`release`, writes of the same
   * commit): a reader that sees the release finds it. Says what became of `release`: committed
   * ("landed"), refused with nothing written (the thread changed since the watch saw it, or no log
   * write carried it: "no"), or failed without knowing ("unknown").
   */
  private async closeLog(
    status: RunOutcome,
    release: ((batch: WriteBatch) => void) | undefined,
  ): Promise<"landed" | "no" | "unknown"> {
    let rode: "landed" | "no" | "unknown" = "no";
    const commit = (fill: (batch: WriteBatch) => void) => this.store.commitAlone(fill);
    if (!this.spec.log) {
      if (!release) return rode;
      return within(this.spec.leaseMs / 2, commit(release), "releasing the run lease").then(
        () => "landed" as const,
        (err: unknown) => (isStale(err) || isAlreadyExists(err) ? "no" : "unknown"),
      );
    }
    // Once the bounded wait below gave up, the release goes its own way: a write still to come
    // carries the log's documents alone.
    let gaveUp = false;
    const via: LogCommit | undefined =
      release &&
      (async (add) => {
        if (gaveUp) return commit(add);
        rode = "unknown"; // until the commit answers (the bounded wait may give up first)
        try {
          await commit((batch) => {
            add(batch);
            release(batch);
          });
          rode = "landed";
        } catch (err) {
          // The thread changed since the watch saw it, or the end mark is there (the release
          // went its own way): nothing of that commit was written; the log's documents alone.
          if (!isStale(err) && !isAlreadyExists(err)) throw err;
          if (rode === "unknown") rode = "no";
          await commit(add);
        }
      });
    const { threadId, runId, leaseMs } = this.spec;
    await within(leaseMs / 2, this.spec.log.close({ status }, via), "writing the run's event log").catch(
      (err: unknown) => logger.warn("run log not fully written", { threadId, runId, err: String(err) }),
    );
    gaveUp = true;
    return rode;
  }
}

/** A question as graph input (with whether it is an investigation: set on every turn). */
function turnOf(
  input: { type: "human"; content: unknown; id: string; investigate?: boolean },
  holdBack: boolean,
  turnInput: typeof import("../agent/index.js").turnInput,
) {
  const { investigate, ...message } = input;
  return holdBack ? turnInput(message, !!investigate) : { messages: [message], investigate: !!investigate };
}

/**
 * `graph.stream`'s arguments for a run. A turn whose later writes are held back goes in as a
 * Command (see `turnInput`), so its first checkpoint holds the question in `messages`; a fork or a
 * turn after a stopped run goes in as plain input (the message a dict the messages reducer coerces
 * to a HumanMessage); an answer to the thread's question resumes it; a rerun has no input.
 */
function graphArgs(
  { resumeInput, turnInput }: Pick<typeof import("../agent/index.js"), "resumeInput" | "turnInput">,
  spec: RunSpec,
  holdBack: boolean,
  signal: AbortSignal,
): Parameters<QuarryGraph["stream"]> {
  const { threadId, runId, uid, input } = spec;
  const graphInput =
    "rerun" in input
      ? null // runs on from the checkpoint: its next tasks
      : "resume" in input
        ? resumeInput(input.resume)
        : turnOf(input, holdBack, turnInput);
  return [
    graphInput as unknown as Parameters<QuarryGraph["stream"]>[0],
    {
      configurable: {
        thread_id: threadId,
        user_id: uid,
        run_id: runId,
        ...(spec.person ? { [PERSON_KEY]: spec.person } : {}),
        ...(spec.checkpointId ? { checkpoint_id: spec.checkpointId } : {}),
      },
      streamMode: RunTranscript.graphModes(spec.modes, GRAPH_MODE),
      signal,
      // LangGraph awaits each step's checkpoint before the next: the first one (the user's
      // message, committed with the lease) before any model call. Later ones the RunCheckpointer
      // acknowledges at once and writes in the background while they are held back.
      durability: "sync",
      runId,
      metadata: { run_id: runId, thread_id: threadId, user_id: uid },
    } as Parameters<QuarryGraph["stream"]>[1],
  ];
}
