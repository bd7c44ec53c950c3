/**
 * What a run is asked to do, checked before anything is read or run (the same for every channel:
 * streamed, background, waited on, MCP's ask, a schedule): the body against the schema, the
 * attachments, the assistant, input or resume or a checkpoint to run on from, the stream modes.
 */
import { config } from "../config";
import { QuarryError } from "../errors";
import { ASSISTANT_ID, type StreamMode } from "../contract/protocol";
import { RunStreamBody, parse, questionText } from "./schemas";
import { checkAttachments } from "./attachments";

/** A run request, validated: what to run and how. */
export interface CheckedRun {
  body: RunStreamBody;
  resume: unknown;
  checkpointId: string | undefined;
  /** The question (a rerun's is read from its checkpoint when it starts: empty until then). */
  question: string;
  /**
   * No input, from a checkpoint: the graph runs on from there (the Agent Server's semantics; what a
   * client's "regenerate" sends, with the checkpoint before the answer).
   */
  rerun: boolean;
  modes: StreamMode[];
}

/** Validates a run request's body (the same for streamed, background and waited-on runs); 4xx otherwise. */
export function checkRun(raw: unknown): CheckedRun {
  const body = parse(RunStreamBody, raw ?? {}, "body");
  // Images and PDFs in the question: checked, and in LangChain's standard form from here on.
  const asked = body.input?.messages[0];
  if (asked)
    asked.content = checkAttachments(asked.content, config().attachmentMaxMb) as typeof asked.content;
  if (body.assistant_id !== ASSISTANT_ID) {
    throw new QuarryError(
      "not_found:assistant",
      `Assistant "${body.assistant_id}" not found: use "${ASSISTANT_ID}".`,
    );
  }
  const resume = body.command?.resume;
  if (body.input && resume !== undefined) {
    throw new QuarryError(
      "bad_request:body",
      "Send either input (a new question) or command.resume (the answer to the thread's question), not both.",
    );
  }
  const checkpointId = body.checkpoint_id ?? body.checkpoint?.checkpoint_id ?? undefined;
  const rerun = !body.input && resume === undefined;
  if (rerun && !checkpointId)
    throw new QuarryError(
      "bad_request:body",
      "input is required: { messages: [{ type: 'human', content }] } (or a checkpoint to run on from, with no input).",
    );
  if (resume !== undefined && checkpointId) {
    throw new QuarryError(
      "bad_request:body",
      "command.resume answers the question the thread is waiting on now: leave out checkpoint_id.",
    );
  }
  const question = body.input ? questionText(body.input) : rerun ? "" : answerText(resume);
  const requested = body.stream_mode === undefined ? ["values"] : [body.stream_mode].flat();
  if (requested.includes("messages")) {
    throw new QuarryError(
      "bad_request:body",
      'stream_mode "messages" is not supported: use "messages-tuple".',
    );
  }
  const modes = [...new Set(requested as StreamMode[])];
  return { body, resume, checkpointId, question, rerun, modes };
}

/** `command.resume` (validated: a string or `{ answer }`) as the answer's text. */
export function answerText(resume: unknown): string {
  return typeof resume === "string" ? resume.trim() : String((resume as { answer: string }).answer).trim();
}
