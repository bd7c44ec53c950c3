/**
 * The Google stand-in's script for the browser tests: the sample-data analyst (`smartScript`),
 * plus: a question containing "in detail" gets a few seconds of answer (so a test sees the SQL,
 * table and chart arrive while the answer still streams), one containing "long report" gets
 * its first chunks and then waits until the run lets go (so a test can press Stop midway),
 * "[pause:<key>]" pauses the detailed answer after a few chunks until the test releases <key>
 * (hold-control.ts), and "[quota]" gets a 429.
 */
import type { HoldServer } from "./hold-control";
import { questionOf, smartScript, type Script } from "./scripted-model-script";

/** `[pause:<key>]` in a question: the answer streams a few chunks, then waits until the test releases <key>. */
const PAUSE_WORD = /\[pause:([\w-]+)\]/;

const LONG_REPORT = "long report";
/** A question with this word gets the Gemini API's 429 (quota) answer to its first model call. */
export const QUOTA = "[quota]";
const IN_DETAIL = "in detail";

export function e2eScript(opts: { holds?: HoldServer } = {}): Script {
  const base = smartScript();
  return async (req) => {
    const pause = PAUSE_WORD.exec(questionOf(req))?.[1];
    if (questionOf(req).includes(QUOTA)) {
      return { error: { status: 429, message: "Resource has been exhausted (e.g. check quota)." } };
    }
    const reply = await base(req);
    if (req.role === "generator" && questionOf(req).toLowerCase().includes(LONG_REPORT)) {
      const para = "Sales are spread across many categories, and each one tells a slightly different story. ";
      // Streams its first chunks, then waits until the run lets go of the call (Stop): no race.
      return { ...reply, text: para.repeat(60), holdAfterChunks: 25 };
    }
    if (req.role === "generator" && questionOf(req).toLowerCase().includes(IN_DETAIL)) {
      const more = " Every category contributes, and the ranking above is by revenue after cancellations.";
      const text = `${reply.text ?? ""}${more.repeat(8)}`;
      if (pause && opts.holds) return { ...reply, text, pauseAfterChunks: 3, resume: opts.holds.hold(pause) };
      return { ...reply, text };
    }
    return reply;
  };
}
