/**
 * The chat: the pure reducer's state, the open thread's state (`useThreadState`), the run and
 * its stream (`useRun`, which rejoins it after a dropped connection through `connection.ts`),
 * and what the person does — ask, answer the agent's question, ask a turn again, stop.
 */
import { useCallback, useReducer } from "react";
import type { Client } from "@langchain/langgraph-sdk";
import { autoTitle } from "@quarry/functions/contract";
import { errorInWords } from "../data/format";
import { chatReducer, EMPTY_CHAT, humanInput, type ChatState } from "./reducer";
import { askedAt } from "./runs";
import type { Attachment } from "../data/attachments";
import { useRun } from "./useRun";
import { useThreadState } from "./useThreadState";

interface Options {
  client: Client;
  threadId: string | null;
  /** A new thread was created for the first question: the page navigates to it. */
  onThreadCreated(id: string): void;
  /** A run ended (done, stopped, failed): thread titles and times may have changed. */
  onRunEnded(): void;
}

export interface ChatApi {
  state: ChatState;
  loading: boolean;
  loadError: string | null;
  streaming: boolean;
  /** Asks a question, with the images and PDFs that go with it (a question may be an image alone). */
  submit(question: string, attachments?: Attachment[]): Promise<void>;
  /** Asks a turn's question again from where it was asked: regenerate, or edit with new words. */
  askAgain(key: string, question: string): Promise<void>;
  /** Answers the clarifying question the last turn is waiting on (`command: { resume }`). */
  answer(text: string): Promise<void>;
  stop(): void;
  /** A thread this page created empty (a file brought into a new conversation): opening it loads nothing. */
  adopt(threadId: string): void;
}

const INVESTIGATE = /^\s*\/investigate\b/i;

const CANNOT_ASK_AGAIN =
  "This question can no longer be asked again from where it was: ask it as a new question.";

export function useChat({ client, threadId, onThreadCreated, onRunEnded }: Options): ChatApi {
  const [state, dispatch] = useReducer(chatReducer, EMPTY_CHAT);
  const run = useRun(client, dispatch, onRunEnded);
  const { start, busy } = run;
  const thread = useThreadState({ client, threadId, dispatch, onLeave: run.leave, onBusy: run.join });
  const { adopt, setLoadError } = thread;

  const submit = useCallback(
    async (question: string, attachments: Attachment[] = []) => {
      // "/investigate <question>": a planned analysis and a report (docs/investigations.md).
      const investigate = INVESTIGATE.test(question);
      const text = question.replace(INVESTIGATE, "").trim();
      if ((!text && !attachments.length) || busy()) return;
      // The question's message id, chosen here so the live turn and the stored message agree (feedback).
      const key = crypto.randomUUID();
      const begin = async () => {
        dispatch({ type: "submitted", key, question: text, attachments });
        if (threadId) return threadId;
        const title = autoTitle(text || attachments.map((a) => a.name ?? a.kind).join(", "));
        const t = await client.threads.create({ metadata: { title } });
        adopt(t.thread_id);
        onThreadCreated(t.thread_id);
        return t.thread_id;
      };
      const input = { ...humanInput(text, key, attachments), ...(investigate ? { investigate } : {}) };
      await start(begin, { kind: "new", body: { input } });
    },
    [client, threadId, onThreadCreated, start, busy, adopt],
  );

  /**
   * Asks a question of the conversation again — the same words (regenerate) or new ones (edit) —
   * from the point where it was asked: a run from that turn's first checkpoint (the question in
   * place, nothing after it), the message sent with the same id so it replaces the old one. The
   * turns after it leave the conversation's current branch.
   */
  const askAgain = useCallback(
    async (key: string, question: string) => {
      const text = question.trim();
      // The question's images and PDFs go again with it.
      const attachments = state.turns.find((t) => t.key === key)?.attachments ?? [];
      if ((!text && !attachments.length) || !threadId || busy()) return;
      let from: string | undefined;
      try {
        from = await askedAt(client, threadId, key);
      } catch (e) {
        setLoadError(errorInWords(e));
        return;
      }
      if (!from) return setLoadError(CANNOT_ASK_AGAIN);
      const begin = async () => {
        dispatch({ type: "forked", key, question: text, attachments });
        return threadId;
      };
      await start(begin, {
        kind: "new",
        body: { input: humanInput(text, key, attachments), checkpointId: from },
      });
    },
    [client, threadId, start, busy, setLoadError, state.turns],
  );

  const answer = useCallback(
    async (reply: string) => {
      const text = reply.trim();
      if (!text || !threadId || busy()) return;
      const begin = async () => {
        dispatch({ type: "answered", answer: text });
        return threadId;
      };
      await start(begin, { kind: "new", body: { command: { resume: text } } });
    },
    [threadId, start, busy],
  );

  const { loading, loadError } = thread;
  const { stop, streaming } = run;
  return { state, loading, loadError, streaming, submit, answer, askAgain, stop, adopt };
}
