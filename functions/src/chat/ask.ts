/**
 * One question asked in a chat, run through the run core as the linked member (`startRun`: the
 * same access, scope, quota admission, audit and event log as the page), on the Quarry thread that
 * chat thread is for them — a new one the first time, so follow-ups continue the conversation, which
 * also appears in the page. A thread waiting on a clarifying question takes the next message as its
 * answer, as the page's composer does. A message that starts with `investigate:` (or `/investigate`)
 * starts an investigation (docs/investigations.md): its plan comes back as the question, and the
 * next message in the thread ("run", "drop 2", "cancel") answers it.
 */
import { randomUUID } from "node:crypto";
import { ASSISTANT_ID } from "../contract/protocol";
import { resolveAccess } from "../access/gate";
import type { RunCaller } from "../runs/admission";
import { checkRun } from "../runs/check";
import { CollectingOutput, turnStatus } from "../runs/collect";
import { threadStore } from "../runs/runtime";
import { startRun } from "../runs/start";
import type { Via } from "../tools/person";
import { storeThread, threadOf, type ChatLink } from "./store";

export interface ChatTurn {
  threadId: string;
  runId: string;
  /** The question's message id (feedback names the turn by it). */
  questionId: string;
  status: "answered" | "asking" | "failed" | "stopped";
  out: CollectingOutput;
  /** Why it failed, in words. */
  error?: string;
}

/**
 * The linked member as a run's caller, checked now past the members cache (someone removed since
 * they linked is refused: `forbidden:not_member`, thrown).
 */
export async function chatCaller(link: ChatLink, channel: Via["channel"]): Promise<RunCaller> {
  const access = await resolveAccess(
    { uid: link.uid, email: link.email ?? undefined, emailVerified: link.emailVerified },
    { fresh: true },
  );
  return { uid: link.uid, email: link.email, access, via: { channel } };
}

/** `investigate: <question>` or `/investigate <question>`: the question, to investigate. */
const INVESTIGATE = /^\s*(?:\/investigate\b|investigate:)\s*([\s\S]+)$/i;

/** The question and whether it asks for an investigation. */
function chatQuestion(text: string): { text: string; investigate: boolean } {
  const m = INVESTIGATE.exec(text);
  return m ? { text: m[1].trim(), investigate: true } : { text, investigate: false };
}

/** Runs `text` as `caller` in the Quarry thread of `chatThread`; refusals before the run throw. */
export async function askInChat(
  caller: RunCaller,
  chatThread: string,
  text: string,
  onPhase: (words: string) => void,
): Promise<ChatTurn> {
  const known = await threadOf(chatThread, caller.uid);
  const threadId = known?.threadId ?? randomUUID();
  const waiting = known
    ? (await (await threadStore()).get(threadId, caller.uid)).status === "interrupted"
    : false;
  const questionId = waiting && known?.questionId ? known.questionId : randomUUID();
  const asked = chatQuestion(text);
  const checked = checkRun({
    assistant_id: ASSISTANT_ID,
    ...(waiting
      ? { command: { resume: text } }
      : {
          input: {
            messages: [{ type: "human", content: asked.text, id: questionId }],
            ...(asked.investigate ? { investigate: true } : {}),
          },
        }),
    stream_mode: ["updates", "custom"],
    ...(known ? {} : { if_not_exists: "create" }),
  });
  // Kept before the run: a follow-up sent while this one runs finds the thread (and is told it is busy).
  await storeThread(chatThread, caller.uid, { threadId, questionId });
  const out = new CollectingOutput(onPhase);
  const runId = randomUUID();
  const run = await startRun(caller, threadId, checked, out, runId);
  const status = turnStatus(run.status, out);
  const error = run.error?.message ?? out.error?.message;
  return { threadId, runId, questionId, status, out, ...(status === "failed" && error ? { error } : {}) };
}
