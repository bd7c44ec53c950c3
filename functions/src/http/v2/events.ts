/**
 * A run's event log (v1 events, event-log.ts) seen as Agent Streaming Protocol v2 events.
 *
 * The log is the one record of a run: v1 clients replay it as it is, v2 clients through this view.
 * The view is a pure function of the log's events in order, so every instance turns the same log
 * into the same events with the same `seq` — `since` works whichever instance a client reconnects
 * to. LangGraph's toolkit (`convertToProtocolEvent`) frames the channels it covers (values,
 * updates, messages, custom); lifecycle and input events, which LangGraph synthesises in its own
 * run loop (not from a log), are framed here the way its protocol types declare them.
 *
 * Lean by what the clients read (the bytes are in docs/benchmarks.md, `stream-size`): lifecycle is
 * the root's alone — Quarry's graph has no subgraphs, so, as on LangGraph's own server, no other
 * namespace has one; its stages travel on `custom:phase`, to a subscription that asks for them
 * (`@langchain/react`'s `useStream` opens two streams that both match every lifecycle event at
 * depth ≤ 1, and its subgraph discovery never shows a namespace without descendants). A message
 * starts on the `messages` channel with its first text: one without text (the planner's tool
 * calls) is in the values that follow it, which hold its tool calls. Its text goes as one delta per
 * stored document of the log (`flush`). A values event carries a message whole once per run and
 * then as a reference (the hook keeps the copy it holds); the run's last values is its whole state.
 *
 * `seq` = run number × 2³⁶ + log id × 16 + the event's place among those one log event makes (a
 * continued run's ids start at attempt × 2²⁴, event-log.ts, far below 2³²): it
 * increases along a thread's runs (the run number is taken with the run's lease), and never
 * repeats, which the hook relies on (it drops an `event_id` it has seen).
 */
import { convertToProtocolEvent } from "@langchain/langgraph/stream";
import type { RunOutcome } from "../../contract/protocol";
import type { LoggedEvent } from "../../runs/event-log";
import { endsTurn, leanState, leanUpdate, messagesOf, referencing, roleOf, textOfBlocks } from "./state";

/** Sequence numbers per run, and per log event. */
const SEQ_RUN = 2 ** 36;
const SEQ_STEP = 16;

/** The run number a `seq` belongs to. */
export const runNoOfSeq = (seq: number) => Math.floor(seq / SEQ_RUN);
/** The first `seq` of run `runNo` (its events are all above it). */
export const runSeqBase = (runNo: number) => runNo * SEQ_RUN;

/** The root graph's name in lifecycle events and the agent tree. */
export const GRAPH_NAME = "agent";

export type AgentStatus = "started" | "running" | "completed" | "failed" | "interrupted";

export interface V2Event {
  type: "event";
  event_id: string;
  seq: number;
  method: string;
  params: { namespace: string[]; timestamp: number; node?: string; data: unknown };
}

/** The root lifecycle status for how a run ended. */
export function statusOfOutcome(outcome: RunOutcome | undefined): AgentStatus {
  if (outcome === "success") return "completed";
  if (outcome === "interrupted") return "interrupted";
  if (outcome === "cancelled") return "interrupted";
  return "failed";
}

interface OpenMessage {
  id: string;
  node?: string;
  text: string;
}

/** One run's v2 events, built log event by log event. */
export class ProtocolView {
  private open: OpenMessage | undefined;
  /** The open message's text not sent yet, and the log event whose place its delta takes. */
  private pending: { frame: Frame; node?: string; text: string } | undefined;
  /** Events made by a flush, to go out before those of the log event being converted. */
  private held: V2Event[] = [];
  private readonly asked = new Set<string>();
  /** Ids of the messages a values event of this run has carried whole. */
  private readonly carried = new Set<string>();
  /** The latest state (lean) when the values event that carried it held references: owed whole at the end. */
  private owedState: Record<string, unknown> | undefined;
  private started = false;
  private ended = false;
  /** The root status now (what `agent.getTree` reports). */
  status: AgentStatus = "started";

  constructor(private readonly runNo: number) {}

  /** The v2 events of log event `e` (its id sets their `seq`). */
  convert(e: LoggedEvent): V2Event[] {
    const out = new Frame(this.runNo, e.id);
    if (e.event !== "messages") this.flushDelta();
    if (!this.started) this.start(out);
    switch (e.event) {
      case "metadata":
        // A continuation (runs/continuation.ts): the answer its earlier attempt was streaming was
        // cut and is written again, so that message ends with an error rather than as finished.
        if (((e.data as { attempt?: number } | undefined)?.attempt ?? 1) > 1) this.cutMessage(out);
        break;
      case "messages":
        this.message(out, e.data as [Record<string, unknown>, Record<string, unknown> | undefined]);
        break;
      case "values":
        this.values(out, e.data as Record<string, unknown>);
        break;
      case "updates":
        this.updates(out, e.data as Record<string, unknown>);
        break;
      case "custom":
        this.custom(out, e.data as { type?: string; phase?: string } | undefined);
        break;
      case "error":
        this.finishMessage(out);
        out.custom("error", e.data);
        this.end(out, "failed", (e.data as { message?: string } | undefined)?.message);
        break;
    }
    return [...this.takeHeld(), ...out.events];
  }

  /**
   * The events held back: the open message's text since its last delta. Called at the end of each
   * stored log document (`followRunLog`'s `onBatch`), so the tokens one write of the log holds go
   * out as one delta — they reach the stream together whichever instance reads them, and a client
   * shows them together anyway — and the view stays a function of the log.
   */
  flush(): V2Event[] {
    this.flushDelta();
    return this.takeHeld();
  }

  /** The events that close the run: after log id `lastId`, with how it ended (`lost`: its instance went away). */
  close(lastId: number, outcome: RunOutcome | "lost"): V2Event[] {
    this.flushDelta();
    const out = new Frame(this.runNo, lastId + 1);
    if (!this.started) this.start(out);
    this.finishMessage(out);
    if (outcome === "lost") {
      const message =
        "This answer stopped before it finished (the server running it went away). Your question is saved: ask again.";
      out.custom("error", { error: "unavailable:run", message });
      this.end(out, "failed", message);
    } else this.end(out, statusOfOutcome(outcome));
    return [...this.takeHeld(), ...out.events];
  }

  private start(out: Frame): void {
    this.started = true;
    this.status = "running";
    out.lifecycle([], { event: "running", graph_name: GRAPH_NAME });
  }

  private end(out: Frame, status: AgentStatus, error?: string): void {
    if (this.ended) return;
    this.ended = true;
    this.status = status;
    // The run's last values is its whole state (what the SDK's thread.values resolves to).
    if (this.owedState) out.add("values", [], this.owedState);
    out.lifecycle([], { event: status, graph_name: GRAPH_NAME, ...(error ? { error } : {}) });
  }

  /** Quarry's events on named custom channels (`custom:phase`, `custom:sql`, `custom:result` …). */
  private custom(out: Frame, ev: { type?: string } | undefined): void {
    out.custom(ev?.type ?? "event", ev);
  }

  /**
   * A v1 `messages` item. The log cannot tell a streamed token from a node's finished message by
   * its type (both serialise as `ai`), but LangGraph streams a message either as chunks sharing
   * one id or once whole, never both: so an AI item with the open message's id continues it (its
   * text a delta), and one with another id finishes the open message (and starts its own once it
   * has text). A message finishes when the next one starts, at the next values, or when the run
   * ends; its tool calls and every other message (a question, a tool's result) are in the next
   * values — so a message with no text (a planner's tool calls) is sent there alone, not as an
   * empty message that the same values would replace.
   */
  private message(
    out: Frame,
    [msg, meta]: [Record<string, unknown>, Record<string, unknown> | undefined],
  ): void {
    const node = typeof meta?.langgraph_node === "string" ? meta.langgraph_node : undefined;
    const id = typeof msg?.id === "string" ? msg.id : undefined;
    if (!id || roleOf(msg.type) !== "ai") return;
    if (this.open && this.open.id !== id) this.finishMessage(out);
    const text = typeof msg.content === "string" ? msg.content : textOfBlocks(msg.content);
    if (!text) return;
    if (!this.open) {
      this.open = { id, node, text: "" };
      out.message(node, { event: "message-start", id });
      out.message(node, { event: "content-block-start", index: 0, content: { type: "text", text: "" } });
    }
    this.open.text += text;
    if (this.pending) this.pending.text += text;
    else this.pending = { frame: out, node: this.open.node, text };
  }

  /** Sends the open message's held text as one delta, numbered in the log event of its first token. */
  private flushDelta(): void {
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    const from = p.frame.events.length;
    p.frame.message(p.node, {
      event: "content-block-delta",
      index: 0,
      delta: { type: "text-delta", text: p.text },
    });
    this.held.push(...p.frame.events.slice(from));
  }

  private takeHeld(): V2Event[] {
    const held = this.held;
    this.held = [];
    return held;
  }

  private cutMessage(out: Frame): void {
    this.flushDelta();
    const open = this.open;
    if (!open) return;
    this.open = undefined;
    const message = "The server writing this answer stopped; it is written again below.";
    out.message(open.node, { event: "error", message, code: "unavailable:run" });
  }

  private finishMessage(out: Frame): void {
    this.flushDelta();
    const open = this.open;
    if (!open) return;
    this.open = undefined;
    out.message(open.node, {
      event: "content-block-finish",
      index: 0,
      content: { type: "text", text: open.text },
    });
    out.message(open.node, { event: "message-finish" });
  }

  /**
   * The state's output channels (messages lean), its interrupt as `input.requested`. A values
   * event that carries only the interrupt is no state: a client replaces its values with each
   * values event, so none is sent for it.
   */
  private values(out: Frame, data: Record<string, unknown>): void {
    this.finishMessage(out);
    const { __interrupt__: asked, ...values } = data ?? {};
    if (Object.keys(values).length) {
      const state = leanState(values);
      const sent = endsTurn(state) ? state : referencing(state, this.carried);
      for (const m of messagesOf(state)) if (typeof m.id === "string") this.carried.add(m.id);
      this.owedState = sent === state ? undefined : state;
      out.add("values", [], sent);
    }
    this.ask(out, asked);
  }

  private updates(out: Frame, data: Record<string, unknown>): void {
    if (data && "__interrupt__" in data) return this.ask(out, data.__interrupt__);
    for (const [node, update] of Object.entries(data ?? {}))
      out.add("updates", [], { [node]: leanUpdate(update) });
  }

  private ask(out: Frame, interrupts: unknown): void {
    for (const i of Array.isArray(interrupts) ? (interrupts as { id?: unknown; value?: unknown }[]) : []) {
      if (typeof i?.id !== "string" || this.asked.has(i.id)) continue;
      this.asked.add(i.id);
      out.raw("input.requested", [], { interrupt_id: i.id, payload: i.value });
    }
  }
}

/** The events one log event makes, numbered. */
class Frame {
  readonly events: V2Event[] = [];
  constructor(
    private readonly runNo: number,
    private readonly logId: number,
  ) {}

  private nextSeq(): number {
    if (this.events.length >= SEQ_STEP)
      throw new Error("one log event made more protocol events than it may");
    return this.runNo * SEQ_RUN + this.logId * SEQ_STEP + this.events.length;
  }

  /** A channel LangGraph's toolkit frames. */
  add(mode: "values" | "updates" | "messages" | "custom", namespace: string[], payload: unknown): void {
    const seq = this.nextSeq();
    for (const e of convertToProtocolEvent({ namespace, mode, payload, seq })) {
      this.events.push({ ...(e as unknown as V2Event), event_id: String(seq) });
    }
  }

  message(node: string | undefined, data: Record<string, unknown>): void {
    this.add("messages", [], [data, node ? { langgraph_node: node } : {}]);
  }

  custom(name: string, payload: unknown): void {
    this.add("custom", [], { name, payload });
  }

  lifecycle(namespace: string[], data: { event: AgentStatus; graph_name: string; error?: string }): void {
    this.raw("lifecycle", namespace, data);
  }

  /** A channel LangGraph synthesises in its run loop (lifecycle, input), framed as its types declare. */
  raw(method: string, namespace: string[], data: unknown): void {
    const seq = this.nextSeq();
    this.events.push({
      type: "event",
      event_id: String(seq),
      seq,
      method,
      params: { namespace, timestamp: Date.now(), data },
    });
  }
}
