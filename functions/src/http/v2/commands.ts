/**
 * `POST /threads/:id/commands` (Agent Streaming Protocol v2): one JSON command in, one JSON
 * response out. A run (`run.start`, `input.respond`, `state.fork`) goes through the same lifecycle
 * as every other run — queued on the background task queue (an HTTPS function has no CPU once its
 * response is sent), access and quota checked when it starts, the thread's lease, the event log —
 * and the command answers once the run holds the thread, or with why it could not start (quota,
 * a busy thread…), so nothing is left pending behind a refusal. The events are read from
 * `POST /threads/:id/stream/events` (stream.ts).
 */
import type { Request, Response } from "express";
import { z } from "zod";
import { ASSISTANT_ID, type MultitaskStrategy } from "../../contract/protocol";
import { callerOf } from "../../access/caller";
import { agentGraph, threadStore } from "../../runs/runtime";
import { ThreadIdParam, parse } from "../../runs/schemas";
import { toPlain } from "../../runs/serialize";
import { leaseHolder } from "../../runs/thread-doc";
import { ProtocolError, toErrorResponse } from "./errors";
import { GRAPH_NAME, statusOfOutcome } from "./events";
import { startQueued, type RunCtx } from "./queue";
import { leanState } from "./state";

const Command = z.strictObject({
  id: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  method: z.string().min(1).max(100),
  params: z.looseObject({}).optional(),
});
type Command = z.infer<typeof Command>;

export async function handleCommand(req: Request, res: Response): Promise<void> {
  const caller = callerOf(req);
  const threadId = parse(ThreadIdParam, req.params.threadId, "path");
  let command: Command;
  try {
    command = parse(Command, req.body ?? {}, "command");
  } catch (err) {
    // Not a command at all: the protocol's error response with a 400 (its id, if it had one).
    const id = typeof req.body?.id === "number" ? (req.body.id as number) : null;
    const { status, body } = toErrorResponse(err, id);
    res.status(status).json(body);
    return;
  }
  const ctx: RunCtx = { ...caller, threadId, meta: {} };
  try {
    const result = await dispatch(ctx, command);
    res.json({ type: "success", id: command.id, result, meta: { thread_id: threadId, ...ctx.meta } });
  } catch (err) {
    // A command that could not be carried out answers 200 with the protocol's error response (the
    // SDK raises it as a ProtocolError with its code and message).
    res.json({ ...toErrorResponse(err, command.id).body, meta: { thread_id: threadId } });
  }
}

async function dispatch(ctx: RunCtx, { method, params = {} }: Command): Promise<unknown> {
  switch (method) {
    case "run.start":
      return runStart(ctx, params);
    case "input.respond":
      return inputRespond(ctx, params);
    case "state.get":
      return stateGet(ctx, params);
    case "state.listCheckpoints":
      return listCheckpoints(ctx, params);
    case "state.fork":
      return stateFork(ctx, params);
    case "agent.getTree":
      return agentTree(ctx);
    case "input.inject":
      throw new ProtocolError(
        "not_supported",
        "input.inject is not supported: Quarry answers one question at a time. Wait for the answer, or stop it and ask again.",
      );
    case "subscription.subscribe":
    case "subscription.unsubscribe":
    case "subscription.reconnect":
      throw new ProtocolError(
        "not_supported",
        `${method} is for the WebSocket transport: over HTTP, open POST /threads/${ctx.threadId}/stream/events with the channels (and since) instead.`,
      );
    default:
      throw new ProtocolError(
        "unknown_command",
        `Unknown command "${method.slice(0, 100)}": use run.start, input.respond, state.get, state.listCheckpoints, state.fork or agent.getTree.`,
      );
  }
}

const RunStartParams = z.looseObject({
  assistant_id: z.string().min(1).max(200),
  input: z.unknown().optional(),
  config: z.looseObject({ configurable: z.looseObject({}).optional() }).nullish(),
  metadata: z.looseObject({}).nullish(),
  multitaskStrategy: z.string().optional(),
  multitask_strategy: z.string().optional(),
});

/**
 * `run.start`: a new question (input with messages), the answer to the thread's question (any
 * other input while the thread waits for one), or a rerun from a checkpoint (no input, the
 * checkpoint in `config.configurable.checkpoint_id`: what the hook's regenerate and edit send).
 */
async function runStart(ctx: RunCtx, raw: Record<string, unknown>): Promise<{ run_id: string }> {
  const p = parse(RunStartParams, raw, "run.start params");
  if (p.assistant_id !== ASSISTANT_ID) {
    throw new ProtocolError(
      "invalid_argument",
      `Assistant "${p.assistant_id}" not found: use "${ASSISTANT_ID}".`,
    );
  }
  const checkpointId = p.config?.configurable?.checkpoint_id;
  const question = isQuestion(p.input);
  const resume = !question && p.input !== undefined && p.input !== null;
  const body = {
    assistant_id: ASSISTANT_ID,
    ...(question ? { input: p.input } : {}),
    ...(resume ? { command: { resume: p.input } } : {}),
    ...(typeof checkpointId === "string" ? { checkpoint_id: checkpointId } : {}),
    ...(p.metadata ? { metadata: p.metadata } : {}),
    multitask_strategy: strategyOf(p.multitaskStrategy ?? p.multitask_strategy),
    // A new thread id is created by its first question only (an answer or a rerun needs a thread).
    ...(question ? { if_not_exists: "create" } : {}),
    stream_resumable: true,
  };
  return { run_id: await startQueued(ctx, body) };
}

const isQuestion = (input: unknown) =>
  !!input && typeof input === "object" && Array.isArray((input as { messages?: unknown }).messages);

/**
 * The SDK sends a multitask strategy with every run.start ("enqueue" by default). Quarry runs one
 * answer at a time and keeps no queue: on an idle thread every strategy starts the run; on a busy
 * one "interrupt" and "rollback" stop the running answer first, "reject" and "enqueue" are refused.
 */
function strategyOf(raw: string | undefined): MultitaskStrategy {
  if (raw === "interrupt" || raw === "rollback" || raw === "reject") return raw;
  if (raw === undefined || raw === "enqueue") return "reject";
  throw new ProtocolError(
    "invalid_argument",
    `multitaskStrategy "${raw.slice(0, 40)}" is not one of reject, interrupt, rollback, enqueue.`,
  );
}

const RespondOne = z.looseObject({ interrupt_id: z.string().min(1).max(200), response: z.unknown() });
const RespondMany = z.looseObject({
  responses: z.array(RespondOne).min(1, "send at least one response").max(10),
});

/** `input.respond`: the answer to the question the thread waits on (by its interrupt id). */
async function inputRespond(ctx: RunCtx, raw: Record<string, unknown>): Promise<Record<string, never>> {
  const many = RespondMany.safeParse(raw);
  const answers = many.success ? many.data.responses : [parse(RespondOne, raw, "input.respond params")];
  if (answers.length > 1) {
    throw new ProtocolError(
      "invalid_argument",
      "Quarry asks one question at a time: send one response (interrupt_id and response).",
    );
  }
  const waiting = await pendingInterrupts(ctx);
  if (!waiting.length) {
    throw new ProtocolError(
      "no_such_interrupt",
      `Thread ${ctx.threadId} is not waiting for an answer (it asked nothing, or the question was already answered): send a new question with run.start.`,
    );
  }
  const unknown = answers.find((a) => !waiting.includes(a.interrupt_id));
  if (unknown) {
    throw new ProtocolError(
      "no_such_interrupt",
      `Interrupt ${unknown.interrupt_id} is not the question thread ${ctx.threadId} waits on (${waiting.join(", ")}).`,
    );
  }
  const response = answers[0].response;
  await startQueued(ctx, {
    assistant_id: ASSISTANT_ID,
    command: { resume: response },
    multitask_strategy: "reject",
    stream_resumable: true,
  });
  return {};
}

async function pendingInterrupts(ctx: RunCtx): Promise<string[]> {
  await (await threadStore()).get(ctx.threadId, ctx.uid);
  const snap = await (await agentGraph()).getState({ configurable: { thread_id: ctx.threadId } });
  return (snap.tasks ?? []).flatMap((t) =>
    (t.interrupts ?? []).flatMap((i) => (typeof i.id === "string" ? [i.id] : [])),
  );
}

const StateGetParams = z.looseObject({
  namespace: z.array(z.string()).max(10).optional(),
  keys: z.array(z.string().max(100)).max(50).optional(),
});

async function stateGet(ctx: RunCtx, raw: Record<string, unknown>) {
  const p = parse(StateGetParams, raw, "state.get params");
  await (await threadStore()).get(ctx.threadId, ctx.uid);
  const snap = await (await agentGraph()).getState({ configurable: { thread_id: ctx.threadId } });
  const values = leanState(toPlain(snap.values ?? {}) as Record<string, unknown>);
  const picked = p.keys
    ? Object.fromEntries(Object.entries(values).filter(([k]) => p.keys!.includes(k)))
    : values;
  const id = snap.config?.configurable?.checkpoint_id as string | undefined;
  return { values: picked, ...(id ? { checkpoint: { id } } : {}) };
}

const ListCheckpointsParams = z.looseObject({
  namespace: z.array(z.string()).max(10).optional(),
  limit: z.number().int().min(1).max(100).optional(),
  before: z.string().max(200).optional(),
});

async function listCheckpoints(ctx: RunCtx, raw: Record<string, unknown>) {
  const p = parse(ListCheckpointsParams, raw, "state.listCheckpoints params");
  await (await threadStore()).get(ctx.threadId, ctx.uid);
  const graph = await agentGraph();
  const checkpoints = [];
  for await (const snap of graph.getStateHistory(
    { configurable: { thread_id: ctx.threadId } },
    {
      limit: p.limit ?? 20,
      ...(p.before ? { before: { configurable: { thread_id: ctx.threadId, checkpoint_id: p.before } } } : {}),
    },
  )) {
    const meta = (snap.metadata ?? {}) as {
      step?: number;
      source?: string;
      writes?: Record<string, unknown>;
    };
    const writer = meta.writes ? Object.keys(meta.writes)[0] : undefined;
    checkpoints.push({
      id: snap.config.configurable?.checkpoint_id as string,
      timestamp: snap.createdAt ?? new Date(0).toISOString(),
      step: meta.step ?? 0,
      ...(writer ? { node_name: writer } : {}),
      metadata: { source: meta.source, step: meta.step },
    });
  }
  return { checkpoints };
}

const ForkParams = z.looseObject({
  checkpoint_id: z.string().min(1).max(200),
  input: z.unknown().optional(),
  config: z.looseObject({}).optional(),
});

/** `state.fork`: a run from an earlier checkpoint — with new input (an edited question) or without (a regenerate). */
async function stateFork(ctx: RunCtx, raw: Record<string, unknown>) {
  const p = parse(ForkParams, raw, "state.fork params");
  if (p.input !== undefined && p.input !== null && !isQuestion(p.input)) {
    throw new ProtocolError(
      "invalid_argument",
      'state.fork input is a question ({ messages: [{ type: "human", content }] }), or none to run again from the checkpoint.',
    );
  }
  const runId = await startQueued(ctx, {
    assistant_id: ASSISTANT_ID,
    ...(isQuestion(p.input) ? { input: p.input } : {}),
    checkpoint_id: p.checkpoint_id,
    multitask_strategy: "reject",
    stream_resumable: true,
  });
  return { run_id: runId, thread_id: ctx.threadId };
}

/** `agent.getTree`: Quarry's graph has no subgraphs; its root and how its latest run stands. */
async function agentTree(ctx: RunCtx) {
  const doc = await (await threadStore()).get(ctx.threadId, ctx.uid);
  const status = leaseHolder(doc)
    ? "running"
    : doc.lastRunEnd
      ? statusOfOutcome(doc.lastRunEnd.outcome)
      : "started";
  return { tree: { namespace: [], status, graph_name: GRAPH_NAME } };
}
