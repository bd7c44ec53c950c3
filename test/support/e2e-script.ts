/**
 * The Google stand-in's script for the browser tests: the sample-data analyst (`smartScript`),
 * plus: a question containing "in detail" gets a few seconds of answer (so a test sees the SQL,
 * table and chart arrive while the answer still streams), one containing "long report" gets
 * hundreds of delayed chunks (so a test can press Stop midway), and one containing "[quota]" a 429.
 */
import { questionOf, smartScript, type Script } from "./scripted-model-script";

export const LONG_REPORT = "long report";
/** A question with this word gets the Gemini API's 429 (quota) answer to its first model call. */
export const QUOTA = "[quota]";
export const IN_DETAIL = "in detail";

export function e2eScript(): Script {
  const base = smartScript();
  return async (req) => {
    if (questionOf(req).includes(QUOTA)) {
      return { error: { status: 429, message: "Resource has been exhausted (e.g. check quota)." } };
    }
    const reply = await base(req);
    if (req.role === "generator" && questionOf(req).toLowerCase().includes(LONG_REPORT)) {
      const para = "Sales are spread across many categories, and each one tells a slightly different story. ";
      return { ...reply, text: para.repeat(60) };
    }
    if (req.role === "generator" && questionOf(req).toLowerCase().includes(IN_DETAIL)) {
      const more = " Every category contributes, and the ranking above is by revenue after cancellations.";
      return { ...reply, text: `${reply.text ?? ""}${more.repeat(8)}` };
    }
    return reply;
  };
}
