/**
 * What a run is started with (zod), shaped like the LangGraph Agent Server's, strict: an unknown
 * field is an error that names it, so a typo never silently changes behaviour. Every channel's run
 * goes through these (the HTTP API, MCP's ask, schedules), and `parse` is the one way a channel
 * turns a schema failure into the 400 that lists each problem.
 */
import { z } from "zod";
import { MAX_ANSWER_CHARS, MAX_QUESTION_CHARS } from "../contract/limits";
import { MULTITASK_STRATEGIES, STREAM_MODES } from "../contract/protocol";
import { QuarryError, type ErrorCode } from "../errors";

const uuid = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, "must be a UUID");
export const metadata = z
  .record(z.string().max(200), z.unknown())
  .refine((m) => JSON.stringify(m).length <= 16_000, {
    message: "metadata must be at most 16 KB of JSON",
  });

export const ThreadIdParam = uuid;
export const RunIdParam = uuid;

/**
 * A checkpoint as the API itself returns it in history, state and search (`checkpoint_map: null`
 * included), so a client can send back what it was given (agent-chat-ui copies a history entry's
 * checkpoint into the next run).
 */
export const checkpointRef = z.strictObject({
  checkpoint_id: z.string().min(1).max(200).nullish(),
  checkpoint_ns: z.string().max(500).nullish(),
  thread_id: z.string().nullish(),
  checkpoint_map: z.record(z.string(), z.unknown()).nullish(),
});

const content = z.union([z.string(), z.array(z.looseObject({ type: z.string() })).max(50)]);

/** A message as the SDK sends it: `{ type: "human", content }` (role/"user" accepted too). */
const InputMessage = z.looseObject({
  type: z.enum(["human", "user"]).optional(),
  role: z.enum(["human", "user"]).optional(),
  content,
  id: z.string().max(200).optional(),
});

export const RunInput = z.strictObject({
  messages: z
    .array(InputMessage)
    .min(1, "input.messages needs the user's message")
    .max(1, "send one message per run"),
  /** Answer with an investigation: a plan the person reviews, its steps, a report (docs/investigations.md). */
  investigate: z.boolean({ message: "input.investigate must be true or false" }).optional(),
});

const answer = z
  .string()
  .trim()
  .min(1, "the answer is empty")
  .max(MAX_ANSWER_CHARS, `keep the answer under ${MAX_ANSWER_CHARS.toLocaleString("en-US")} characters`);

/**
 * `command` as the Agent Server takes it, for what Quarry's graph can be given: `resume` answers the
 * question the thread is waiting on (a string, or `{ answer }`).
 */
const RunCommand = z.strictObject({
  resume: z.union([answer, z.strictObject({ answer })], {
    message: 'command.resume must be the answer as a string (or { "answer": "…" })',
  }),
  update: z.undefined({ message: "command.update is not supported: send input instead" }).optional(),
  goto: z.undefined({ message: "command.goto is not supported: send input instead" }).optional(),
});

/** `messages` is accepted to be refused with a message that names `messages-tuple` (see checkRun). */
const REQUESTED_MODES = [...STREAM_MODES, "messages"] as const;

export const RunStreamBody = z.strictObject({
  assistant_id: z.string().min(1).max(200),
  input: RunInput.nullish(),
  command: RunCommand.nullish(),
  config: z.looseObject({}).nullish(),
  context: z.looseObject({}).nullish(),
  metadata: metadata.nullish(),
  stream_mode: z.union([z.enum(REQUESTED_MODES), z.array(z.enum(REQUESTED_MODES)).max(5)]).optional(),
  stream_subgraphs: z.boolean().optional(),
  stream_resumable: z.boolean().optional(),
  feedback_keys: z.array(z.string()).optional(),
  interrupt_before: z.undefined({ message: "interrupt_before is not supported" }).optional(),
  interrupt_after: z.undefined({ message: "interrupt_after is not supported" }).optional(),
  checkpoint: checkpointRef.nullish(),
  checkpoint_id: z.string().max(200).nullish(),
  webhook: z.undefined({ message: "webhooks are not supported" }).optional(),
  multitask_strategy: z
    .enum(MULTITASK_STRATEGIES, {
      message: "multitask_strategy must be 'reject', 'interrupt' or 'rollback' ('enqueue' is not supported)",
    })
    .optional(),
  on_completion: z.enum(["delete", "keep"]).optional(),
  on_disconnect: z.enum(["cancel", "continue"]).optional(),
  after_seconds: z.undefined({ message: "after_seconds is not supported" }).optional(),
  if_not_exists: z.enum(["reject", "create"]).optional(),
  checkpoint_during: z.boolean().optional(),
  /** SDK ≥ 1.13: refuse a resume when nothing waits for one — Quarry always does (409). */
  strict_resume: z.boolean().optional(),
  /** The SDK's LangSmith tracer settings for `runs.create`; Quarry does not trace to LangSmith. */
  langsmith_tracer: z.looseObject({}).optional(),
  durability: z.enum(["sync", "async", "exit"]).optional(),
});
export type RunStreamBody = z.infer<typeof RunStreamBody>;

/** Parses or throws a 400 that lists each problem as `path: message`. */
export function parse<T extends z.ZodType>(schema: T, value: unknown, what: string): z.infer<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const code: ErrorCode =
    what === "query" ? "bad_request:query" : what === "path" ? "bad_request:params" : "bad_request:body";
  const problems = result.error.issues.map((i) => {
    const where = i.path.length ? i.path.join(".") : what;
    if (i.code === "unrecognized_keys")
      return `unknown field(s) ${i.keys.map((k) => `"${k}"`).join(", ")} in ${where}`;
    return `${where}: ${i.message}`;
  });
  throw new QuarryError(code, `Invalid ${what}: ${problems.join("; ")}.`);
}

/** The user's question as text, with the length limit checked. */
export function questionText(input: z.infer<typeof RunInput>): string {
  const c = input.messages[0].content;
  const text = typeof c === "string" ? c : c.map((p) => (typeof p.text === "string" ? p.text : "")).join("");
  // A question may be an attachment alone ("make me this for Q3" is then in the picture).
  const attached = typeof c !== "string" && c.some((p) => p.type === "image" || p.type === "file");
  if (!text.trim() && attached) return "(attachment)";
  if (!text.trim())
    throw new QuarryError("bad_request:body", "input.messages[0].content is empty: ask a question.");
  if (text.length > MAX_QUESTION_CHARS) {
    throw new QuarryError(
      "bad_request:body",
      `The question is ${text.length} characters; the limit is ${MAX_QUESTION_CHARS}. Shorten it.`,
    );
  }
  return text;
}
