/** The conversation: turns, a composer (Enter sends, Shift+Enter breaks the line) and Stop. */
import { MAX_QUESTION_CHARS, type FirstScreen as FirstScreenData } from "@quarry/functions/contract";
import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent, type RefObject } from "react";
import type { ChatApi } from "./useChat";
import { PartBoundary } from "../PartBoundary";
import { TurnView } from "./TurnView";
import { FirstScreen } from "../threads/FirstScreen";
import type { Settings } from "../settings/useSettings";
import { formatBytes } from "../data/format";

interface Props {
  chat: ChatApi;
  settings: Settings;
  onPageSizeChange(size: number): void;
  /** Votes on the answer to the question with this id. */
  onFeedback?(questionId: string, score: 1 | -1, note?: string): Promise<{ status: string }>;
  /** What an empty conversation offers (starters, datasets); null until loaded or when unavailable. */
  firstScreen: FirstScreenData | null;
}

export function Chat({ chat, settings, onPageSizeChange, onFeedback, firstScreen }: Props) {
  const [draft, setDraft] = useState("");
  const input = useRef<HTMLTextAreaElement>(null);
  const end = useRef<HTMLDivElement>(null);
  const { state, streaming } = chat;
  const last = state.turns[state.turns.length - 1];

  // Follow the stream while it grows.
  useEffect(() => {
    end.current?.scrollIntoView({ block: "end" });
  }, [state.turns.length, last?.answer, last?.queries.length]);

  const send = (e?: FormEvent) => {
    e?.preventDefault();
    const q = draft.trim();
    if (!q || streaming) return;
    setDraft("");
    void chat.submit(q);
  };

  return (
    <section className="chat" aria-label="Conversation">
      <div className="turns">
        {chat.loading && <p className="muted">Loading the conversation…</p>}
        {chat.loadError && (
          <p className="error" role="alert">
            {chat.loadError}
          </p>
        )}
        {state.summarized && (
          <p className="muted small">Earlier questions were summarized to keep the conversation short.</p>
        )}
        {!chat.loading && state.turns.length === 0 && !chat.loadError && (
          <FirstScreen
            data={firstScreen}
            onAsk={(q) => void chat.submit(q)}
            onPick={(x) => {
              setDraft(x);
              input.current?.focus();
            }}
          />
        )}
        {state.turns.map((t) => (
          // An answer that cannot render shows why; the conversation around it stays usable.
          <PartBoundary key={t.key} label="This answer">
            <TurnView
              turn={t}
              settings={settings}
              onPageSizeChange={onPageSizeChange}
              onFeedback={onFeedback ? (score, note) => onFeedback(t.key, score, note) : undefined}
              onAnswer={t === last && !streaming ? (a) => void chat.answer(a) : undefined}
              onAskAgain={streaming ? undefined : (q) => void chat.askAgain(t.key, q)}
              onAsk={t === last && !streaming ? (q) => void chat.submit(q) : undefined}
            />
          </PartBoundary>
        ))}
        {state.threadUsage && state.threadUsage.bytesBilled > 0 && (
          <p className="small muted thread-usage">
            Conversation total: {formatBytes(state.threadUsage.bytesBilled)} billed
          </p>
        )}
        <div ref={end} />
      </div>
      <Composer
        input={input}
        draft={draft}
        onDraft={setDraft}
        streaming={streaming}
        onSend={send}
        onStop={chat.stop}
      />
    </section>
  );
}

interface ComposerProps {
  input: RefObject<HTMLTextAreaElement | null>;
  draft: string;
  onDraft(draft: string): void;
  streaming: boolean;
  onSend(e?: FormEvent): void;
  onStop(): void;
}

/** The question box: Enter sends, Shift+Enter breaks the line; Stop while an answer streams. */
function Composer({ input, draft, onDraft, streaming, onSend, onStop }: ComposerProps) {
  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) onSend(e);
  };
  return (
    <form className="composer" onSubmit={onSend}>
      <label htmlFor="question" className="sr-only">
        Your question
      </label>
      <textarea
        id="question"
        ref={input}
        rows={2}
        maxLength={MAX_QUESTION_CHARS}
        placeholder="Ask about your data…  (Enter to send, Shift+Enter for a new line)"
        value={draft}
        onChange={(e) => onDraft(e.target.value)}
        onKeyDown={onKey}
      />
      {streaming ? (
        <button type="button" className="danger" onClick={onStop}>
          Stop
        </button>
      ) : (
        <button type="submit" className="primary" disabled={!draft.trim()}>
          Send
        </button>
      )}
    </form>
  );
}
