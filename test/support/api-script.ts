/**
 * The Vertex AI stand-in's script for the API tests: the sample-data analyst (`smartScript`), plus
 * magic words a test puts in its question: "[slow]" makes the answer hundreds of streamed chunks
 * (time to cancel or disconnect midway), "[model-error]" makes the model answer 400 (a non-retried
 * Vertex AI error), "[stall]" makes every planner call wait 3 s before answering (time to look at
 * what is stored before the model has answered).
 */
import { questionOf, smartScript, type Script } from "./scripted-model-script";

export const SLOW = "[slow]";
export const MODEL_ERROR = "[model-error]";
export const STALL = "[stall]";
const STALL_MS = 3000;

export function apiScript(): Script {
  const base = smartScript();
  return async (req) => {
    const q = questionOf(req);
    if (q.includes(MODEL_ERROR)) {
      return {
        error: { status: 400, message: "Request contains an invalid argument (scripted model error)." },
      };
    }
    if (req.role === "planner" && q.includes(STALL)) await new Promise((r) => setTimeout(r, STALL_MS));
    const reply = await base(req);
    if (req.role === "generator" && q.includes(SLOW)) {
      return { ...reply, text: "This answer streams slowly so the test can stop it midway. ".repeat(150) };
    }
    return reply;
  };
}
