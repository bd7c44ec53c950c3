/**
 * The Vertex AI stand-in's script for the API tests: the sample-data analyst (`smartScript`), plus
 * magic words a test puts in its question: "[model-error]" makes the model answer 400 (a non-retried
 * Vertex AI error), and words that stop a run at a known point for as long as the test needs, with
 * no timing involved (no test relies on a stream being slow enough):
 * - "[hold:<key>]" makes the planner's model call wait until the test releases <key>, and
 *   "[hold-answer:<key>]" the generator's (see `hold-control.ts`): the lease and the user's message
 *   are stored, the model has not answered;
 * - "[pause-answer:<key>]" makes the answer stream its first 3 chunks, then wait until the test
 *   releases <key> before the rest (a stream caught mid-answer, for rejoining tests);
 * - "[midway]" makes the answer stream its first chunks and then stop until the function drops the
 *   model call (a cancel, a disconnect, a delete), bounded by the stand-in's HOLD_LIMIT_MS.
 */
import { HOLD_ANSWER_WORD, HOLD_WORD, type HoldServer } from "./hold-control";
import { questionOf, smartScript, type Script, type ScriptReply } from "./scripted-model-script";

const MODEL_ERROR = "[model-error]";
export const MIDWAY = "[midway]";
const PAUSE_ANSWER_WORD = /\[pause-answer:([\w-]+)\]/;
const LONG_ANSWER = "This answer stops midway until the run lets go of it. ".repeat(150);

export function apiScript(opts: { holds?: HoldServer } = {}): Script {
  const base = smartScript();
  return async (req) => {
    const q = questionOf(req);
    if (q.includes(MODEL_ERROR)) {
      return {
        error: { status: 400, message: "Request contains an invalid argument (scripted model error)." },
      };
    }
    const word = req.role === "planner" ? HOLD_WORD : req.role === "generator" ? HOLD_ANSWER_WORD : undefined;
    const key = word?.exec(q)?.[1];
    if (key) {
      const failed = await holdOn(key, opts.holds);
      if (failed) return failed;
    }
    const reply = await base(req);
    const pause = req.role === "generator" ? PAUSE_ANSWER_WORD.exec(q)?.[1] : undefined;
    if (pause && opts.holds) {
      const more = " The count comes straight from the orders table, with nothing filtered out.";
      return {
        ...reply,
        text: `${reply.text ?? ""}${more.repeat(4)}`,
        pauseAfterChunks: 3,
        resume: opts.holds.hold(pause),
      };
    }
    if (req.role === "generator" && q.includes(MIDWAY))
      return { ...reply, text: LONG_ANSWER, holdAfterChunks: 3 };
    return reply;
  };
}

/** Waits at the hold; a hold that cannot work or is never released fails the call, saying why. */
async function holdOn(key: string, holds: HoldServer | undefined): Promise<ScriptReply | undefined> {
  if (!holds) {
    return {
      error: { status: 400, message: `Hold "${key}": this stand-in was started without a hold server.` },
    };
  }
  const outcome = await holds.hold(key);
  if (outcome === "released") return undefined;
  const why =
    outcome === "timeout"
      ? `was never released within ${holds.timeoutMs} ms (the test must release it)`
      : "was let go because the test stack is shutting down";
  // 400: ChatVertexAI does not retry it, so the run ends with an error event at once.
  return { error: { status: 400, message: `The model call held on "${key}" ${why}.` } };
}
