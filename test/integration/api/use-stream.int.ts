/**
 * Compatibility with clients Quarry did not write: the SDK's React hook `useStream`, rendered
 * headless (React DOM on a jsdom document), driven the way LangChain's agent-chat-ui drives it —
 * `fetchStateHistory: true`, stream modes `values` with subgraphs and resumable streams, regenerate
 * as `submit(undefined, { checkpoint: firstSeenState.parent_checkpoint })`, edits as
 * `submit({ messages: [edited] }, { checkpoint: firstSeenState.parent_checkpoint })`, thread titles
 * from `threads.search` (`values.messages[0]`), and a reload that rejoins the run with
 * `reconnectOnMount` (the hook's `joinStream`, `Last-Event-ID: -1`). Through the functions emulator,
 * on the SDK version agent-chat-ui's lockfile pins (1.8.10), the one Quarry's page uses (1.15.0)
 * and the latest release (2.0.0).
 */
import { describe, it, expect, beforeAll, afterEach, onTestFinished, vi } from "vitest";
import { JSDOM } from "jsdom";
import { Client as Client1_15 } from "@langchain/langgraph-sdk";
import { useStream as useStream1_15 } from "@langchain/langgraph-sdk/react";
import { Client as Client1_8 } from "langgraph-sdk-1-8-10";
import { useStream as useStream1_8 } from "langgraph-sdk-1-8-10/react";
import { Client as Client2_0 } from "langgraph-sdk-2-0-0";
import { useStream as useStream2_0 } from "langgraph-sdk-2-0-0/react";
import { signUp, type TestUser } from "../../support/auth-emulator";
import { HOLD_URL_ENV, holdClient, type Holds } from "../../support/hold-control";
import { stackEnv } from "../../support/stack-env";

// A document for React DOM (the hook runs in a browser); Node's own fetch and AbortController stay.
const dom = new JSDOM("<!doctype html><html><body></body></html>", { url: "http://127.0.0.1/" });
Object.assign(globalThis, {
  window: dom.window,
  document: dom.window.document,
  sessionStorage: dom.window.sessionStorage,
});
// Testing Library wraps its own renders in act(); the hook's updates from the network are React's
// ordinary scheduled updates, waited on with waitFor.
const { renderHook, waitFor, cleanup } = await import("@testing-library/react");
const { useState } = await import("react");

type AnyClient = {
  threads: { search: (q: object) => Promise<unknown[]>; getState: (id: string) => Promise<unknown> };
};
type Hook = (options: Record<string, unknown>) => unknown;

const VERSIONS: { sdk: string; Client: new (o: object) => unknown; useStream: Hook }[] = [
  { sdk: "1.8.10 (agent-chat-ui's lockfile)", Client: Client1_8, useStream: useStream1_8 as unknown as Hook },
  { sdk: "1.15.0 (Quarry's page)", Client: Client1_15, useStream: useStream1_15 as unknown as Hook },
  { sdk: "2.0.0 (latest)", Client: Client2_0, useStream: useStream2_0 as unknown as Hook },
];

/** What a test reads of the hook (the same in every version). */
interface Stream {
  messages: Msg[];
  isLoading: boolean;
  error: unknown;
  threadId?: string | null;
  submit(values: unknown, options?: Record<string, unknown>): Promise<void>;
  getMessagesMetadata(
    m: Msg,
    i?: number,
  ):
    | {
        firstSeenState?: { parent_checkpoint?: unknown; checkpoint?: { checkpoint_id?: string } };
        branchOptions?: string[];
      }
    | undefined;
  history: unknown[];
}
type Msg = { id?: string; type?: string; content?: unknown; _getType?: () => string; text?: string };

const typeOf = (m: Msg) => m.type ?? m._getType?.();
const textOf = (m: Msg) =>
  typeof m.content === "string"
    ? m.content
    : Array.isArray(m.content)
      ? m.content.map((p: { text?: string }) => p.text ?? "").join("")
      : String(m.text ?? "");
const humans = (s: Stream) => s.messages.filter((m) => typeOf(m) === "human").map(textOf);
const lastAnswer = (s: Stream) => s.messages.filter((m) => typeOf(m) === "ai" && textOf(m).trim()).at(-1);

/** A copy of `storage` as it is now, as a reloaded page finds it (the Storage methods the hook uses). */
function storageCopy(storage: Storage): Pick<Storage, "getItem" | "setItem" | "removeItem"> {
  const items = new Map<string, string>();
  for (let i = 0; i < storage.length; i++) items.set(storage.key(i)!, storage.getItem(storage.key(i)!)!);
  return {
    getItem: (k) => items.get(k) ?? null,
    setItem: (k, v) => void items.set(k, String(v)),
    removeItem: (k) => void items.delete(k),
  };
}

// agent-chat-ui's submit options (Stream.tsx / thread/index.tsx).
const UI_OPTIONS = { streamMode: ["values"], streamSubgraphs: true, streamResumable: true };

let api: string;
let alice: TestUser;
let holds: Holds;

beforeAll(async () => {
  const stack = stackEnv();
  api = stack.urls.api!;
  alice = await signUp(stack.urls.auth!);
  holds = holdClient(stack.env[HOLD_URL_ENV]);
});

afterEach(() => {
  cleanup();
  dom.window.sessionStorage.clear();
});

describe.each(VERSIONS)("useStream of SDK $sdk", ({ Client, useStream }) => {
  const client = () =>
    new Client({
      apiUrl: api,
      defaultHeaders: { authorization: `Bearer ${alice.idToken}` },
      callerOptions: { maxRetries: 0 },
    });

  /**
   * The hook as agent-chat-ui mounts it: the thread id is the page's state (its URL), set from
   * `onThreadId` when the first submit creates the thread.
   */
  function mount(c: unknown, threadId?: string, extra: Record<string, unknown> = {}) {
    let created: string | undefined = threadId;
    const view = renderHook(() => {
      const [id, setId] = useState<string | null>(threadId ?? null);
      const stream = useStream({
        client: c,
        assistantId: "quarry",
        threadId: id,
        fetchStateHistory: true,
        onThreadId: (next: string) => {
          created = next;
          setId(next);
        },
        ...extra,
      }) as Stream;
      // The page renders the messages: reading them is how the hook learns to stream tokens too.
      void stream.messages;
      return stream;
    });
    return { view, stream: () => view.result.current, thread: () => created! };
  }

  /** Submits as the page does and waits for the run to end. */
  async function send(h: ReturnType<typeof mount>, values: unknown, options: Record<string, unknown> = {}) {
    await h.stream().submit(values, { ...UI_OPTIONS, ...options });
    await waitFor(() => expect(h.stream().isLoading).toBe(false), { timeout: 45_000 });
    expect(h.stream().error ?? null).toBeNull();
  }

  // The hook fetches the last 10 checkpoints (fetchStateHistory: true): a turn keeps two (its
  // question and its end), so every step below branches from within that window.
  it("asks, follows up from the history's head, edits a later and the first question, regenerates", async () => {
    const c = client();
    const h = mount(c);
    await send(h, { messages: [{ type: "human", content: "How many orders were placed in total?" }] });
    expect(humans(h.stream())).toEqual(["How many orders were placed in total?"]);
    expect(textOf(lastAnswer(h.stream())!)).not.toBe("");

    // A follow-up: the hook sends the head of the history as the checkpoint (1.8.10 always does).
    await send(h, { messages: [{ type: "human", content: "And how many customers are there?" }] });
    expect(humans(h.stream())).toEqual([
      "How many orders were placed in total?",
      "And how many customers are there?",
    ]);

    // Edit the later question: it replaces the question after the first answer.
    const second = h.stream().messages.filter((m) => typeOf(m) === "human")[1];
    const secondParent = h.stream().getMessagesMetadata(second)?.firstSeenState?.parent_checkpoint;
    await send(
      h,
      { messages: [{ type: "human", content: "Which countries have the most customers?" }] },
      { checkpoint: secondParent },
    );
    expect(humans(h.stream())).toEqual([
      "How many orders were placed in total?",
      "Which countries have the most customers?",
    ]);

    // Edit the first question: it replaces the whole conversation's start (a branch from the empty start).
    const first = h.stream().messages.find((m) => typeOf(m) === "human")!;
    const firstParent = h.stream().getMessagesMetadata(first)?.firstSeenState?.parent_checkpoint;
    expect(firstParent).toBeTruthy();
    await send(
      h,
      { messages: [{ type: "human", content: "How many products are there?" }] },
      { checkpoint: firstParent },
    );
    expect(humans(h.stream())).toEqual(["How many products are there?"]);
    const edited = h.stream().messages.find((m) => typeOf(m) === "human")!;
    await waitFor(() => expect(h.stream().getMessagesMetadata(edited)?.branchOptions?.length).toBe(2));

    // Regenerate the last answer: no input, from the checkpoint before the answer first appeared
    // (the question's): the turn runs again.
    const before = lastAnswer(h.stream())!;
    const parent = h.stream().getMessagesMetadata(before)?.firstSeenState?.parent_checkpoint;
    expect(parent).toBeTruthy();
    await send(h, undefined, { checkpoint: parent });
    const again = lastAnswer(h.stream())!;
    expect(again.id).not.toBe(before.id);
    expect(humans(h.stream())).toEqual(["How many products are there?"]);
    // The hook shows a branch's switcher on the first message of the branch (here the re-planned
    // tool call): the first message first seen where the new answer was.
    const seenIn = (m: Msg) => h.stream().getMessagesMetadata(m)?.firstSeenState?.checkpoint?.checkpoint_id;
    await waitFor(() => {
      const branchStart = h.stream().messages.find((m) => seenIn(m) === seenIn(again))!;
      expect(h.stream().getMessagesMetadata(branchStart)?.branchOptions?.length).toBe(2);
    });

    // The thread list labels the thread from values.messages[0] (agent-chat-ui's getThreadTitle).
    const found = (await (c as AnyClient).threads.search({
      metadata: { graph_id: "quarry" },
      limit: 100,
    })) as {
      thread_id: string;
      values: { messages?: Msg[] } | null;
    }[];
    const listed = found.find((t) => t.thread_id === h.thread());
    expect(listed?.values?.messages?.[0]).toMatchObject({
      type: "human",
      content: "How many products are there?",
    });
  });

  it("a reload rejoins the running answer (reconnectOnMount → joinStream from the start)", async () => {
    const c = client();
    const key = holds.newKey("reload");
    const question = `How many orders were placed in total? [pause-answer:${key}]`;
    const first = mount(c, undefined, { reconnectOnMount: () => dom.window.sessionStorage });
    const submitted = first.stream().submit({ messages: [{ type: "human", content: question }] }, UI_OPTIONS);
    // The answer has started (its first chunks streamed) and waits at the hold.
    await waitFor(() => expect(textOf(lastAnswer(first.stream()) ?? {})).not.toBe(""), { timeout: 45_000 });
    const threadId = first.thread();
    // The page reloads: the new page finds the session storage as the old one left it. The old
    // hook lives on in this process (1.x keeps reading its stream) and, when its stream ends, takes
    // its rejoin key out of the storage, which no reloaded page would see: if that came before the
    // new hook had its history (which it waits for before it rejoins), the new hook never rejoined
    // and showed the history it had read before the answer was stored (CI, twice; 1.15 only).
    const reloaded = storageCopy(dom.window.sessionStorage);
    first.view.unmount();
    // What the reloaded page asks for (the SDK fetches through the global fetch; the spy calls through).
    const fetched = vi.spyOn(globalThis, "fetch");
    onTestFinished(() => fetched.mockRestore());

    const second = mount(c, threadId, { reconnectOnMount: () => reloaded });
    await waitFor(() => expect(second.stream().isLoading).toBe(true), { timeout: 20_000 });
    await holds.release(key);
    await waitFor(() => expect(second.stream().isLoading).toBe(false), { timeout: 45_000 });
    expect(second.stream().error ?? null).toBeNull();
    const state = (await (c as AnyClient).threads.getState(threadId)) as { values: { messages: Msg[] } };
    const stored = state.values.messages.at(-1)!;
    // The rejoined stream carries the whole answer, once: the same text as the thread's state. Waited
    // for: once its stream has ended the hook swaps its stream values for the history it refetches.
    await waitFor(() => expect(textOf(lastAnswer(second.stream()) ?? {})).toBe(textOf(stored)), {
      timeout: 20_000,
    });
    expect(humans(second.stream())).toEqual([question]);
    // It rejoined the run's stream, from the start.
    const asked = fetched.mock.calls.map(
      ([input, init]) => `${init?.method ?? "GET"} ${new URL(String(input)).pathname}`,
    );
    expect(asked.filter((a) => /^GET \/.*\/threads\/[^/]+\/runs\/[^/]+\/stream$/.test(a))).toHaveLength(1);
    // The unmounted hook's own stream (1.x keeps reading it, 2.0 aborts it) has ended too.
    await submitted.catch(() => {});
  });
});
