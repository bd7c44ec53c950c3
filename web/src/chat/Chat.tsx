/** The conversation: turns, a composer (Enter sends, Shift+Enter breaks the line) and Stop. */
import {
  MAX_QUESTION_CHARS,
  type FirstScreen as FirstScreenData,
  type View,
} from "@quarry/functions/contract";
import {
  useEffect,
  useRef,
  useState,
  type ClipboardEvent,
  type DragEvent,
  type FormEvent,
  type KeyboardEvent,
  type RefObject,
} from "react";
import type { ChatApi } from "./useChat";
import { PartBoundary } from "../PartBoundary";
import { TurnView } from "./TurnView";
import type { Turn } from "./model";
import { FirstScreen } from "../threads/FirstScreen";
import type { Settings } from "../settings/useSettings";
import { formatBytes } from "../data/format";
import { FilesPanel } from "../files/FilesPanel";
import type { FilesApi } from "../files/useFiles";
import { AttachmentChips } from "./Attachments";
import { useAttachments, type AttachmentsApi } from "./useAttachments";
import { PaperclipIcon } from "../icons/Icons";
import { FollowUps } from "./FollowUps";

interface Props {
  chat: ChatApi;
  settings: Settings;
  onPageSizeChange(size: number): void;
  /** Votes on the answer to the question with this id. */
  onFeedback?(questionId: string, score: 1 | -1, note?: string): Promise<{ status: string }>;
  /** What an empty conversation offers (starters, datasets); null until loaded or when unavailable. */
  firstScreen: FirstScreenData | null;
  /** The conversation's files as tables (a dropped CSV goes there). */
  files: FilesApi;
  /** Largest image or PDF a question may carry, MB (images are scaled down to fit). */
  attachmentMaxMb: number;
  /** Opens "Schedule…" for an answer that ran SQL; absent before the conversation exists. */
  onSchedule?(turn: Turn): void;
  /** How answers are shown (GET /me/preferences). */
  view?: View;
  /** "Ask the data team to verify" the answer to the question with this id; absent before the conversation exists. */
  onVerify?(questionId: string): Promise<unknown>;
}

/** Files dropped or pasted, if any (a plain text paste is left to the box). */
const filesOf = (list: FileList | null | undefined) => Array.from(list ?? []);

/** Files dropped anywhere on the conversation go where the paperclip's go; the chat is outlined meanwhile. */
function useDropZone(add: (files: File[]) => void) {
  const [dragging, setDragging] = useState(false);
  const handlers = {
    onDragOver: (e: DragEvent) => {
      if (!e.dataTransfer?.types.includes("Files")) return;
      e.preventDefault();
      setDragging(true);
    },
    onDragLeave: (e: DragEvent) => {
      if (e.currentTarget === e.target) setDragging(false);
    },
    onDrop: (e: DragEvent) => {
      e.preventDefault();
      setDragging(false);
      add(filesOf(e.dataTransfer?.files));
    },
  };
  return { dragging, handlers };
}

/** Loading, a load failure, and whether older turns were summarized. */
function Notices({ chat }: { chat: ChatApi }) {
  return (
    <>
      {chat.loading && <p className="muted">Loading the conversation…</p>}
      {chat.loadError && (
        <p className="error" role="alert">
          {chat.loadError}
        </p>
      )}
      {chat.state.summarized && (
        <p className="muted small">Earlier questions were summarized to keep the conversation short.</p>
      )}
    </>
  );
}

type TurnsProps = Pick<
  Props,
  "chat" | "settings" | "onPageSizeChange" | "onFeedback" | "onSchedule" | "view" | "onVerify"
>;

/** The conversation's answers, each in its own boundary, and what the thread has cost so far. */
function Turns({ chat, settings, onPageSizeChange, onFeedback, onSchedule, view, onVerify }: TurnsProps) {
  const { state, streaming } = chat;
  const last = state.turns[state.turns.length - 1];
  return (
    <>
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
            onSchedule={onSchedule && !streaming ? () => onSchedule(t) : undefined}
            {...(view ? { view } : {})}
            {...(onVerify ? { onVerify: () => onVerify(t.key) } : {})}
          />
        </PartBoundary>
      ))}
      {state.threadUsage && state.threadUsage.bytesBilled > 0 && (
        <p className="small muted thread-usage">
          Conversation total: {formatBytes(state.threadUsage.bytesBilled)} billed
        </p>
      )}
    </>
  );
}

/** The last answer's follow-ups, above the composer: a long answer never pushes them out of sight. */
function LastFollowUps({ chat }: { chat: ChatApi }) {
  const last = chat.state.turns[chat.state.turns.length - 1];
  if (last?.status !== "done" || chat.streaming || !last.suggestions?.length) return null;
  return (
    <div className="composer-follow-ups">
      <FollowUps questions={last.suggestions} onAsk={(q) => void chat.submit(q)} />
    </div>
  );
}

export function Chat({
  chat,
  settings,
  onPageSizeChange,
  onFeedback,
  firstScreen,
  files,
  attachmentMaxMb,
  onSchedule,
  view,
  onVerify,
}: Props) {
  const [draft, setDraft] = useState("");
  const attachments = useAttachments(attachmentMaxMb, files.upload);
  const drop = useDropZone(attachments.add);
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
    if ((!q && !attachments.attached.length) || attachments.reading || streaming) return;
    setDraft("");
    void chat.submit(q, attachments.take());
  };

  return (
    <section
      className={drop.dragging ? "chat dragging" : "chat"}
      aria-label="Conversation"
      {...drop.handlers}
    >
      <div className="turns">
        <Notices chat={chat} />
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
        <Turns
          chat={chat}
          settings={settings}
          onPageSizeChange={onPageSizeChange}
          onFeedback={onFeedback}
          onSchedule={onSchedule}
          view={view}
          onVerify={onVerify}
        />
        <div ref={end} />
      </div>
      <LastFollowUps chat={chat} />
      <FilesPanel api={files} />
      <Composer
        input={input}
        draft={draft}
        onDraft={setDraft}
        streaming={streaming}
        onSend={send}
        onStop={chat.stop}
        attachments={attachments}
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
  attachments: AttachmentsApi;
}

/**
 * The question box: Enter sends, Shift+Enter breaks the line; Stop while an answer streams. The
 * paperclip (and a paste of an image or file) brings files: images and PDFs go with the question.
 */
function Composer({ input, draft, onDraft, streaming, onSend, onStop, attachments }: ComposerProps) {
  const picker = useRef<HTMLInputElement>(null);
  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) onSend(e);
  };
  const onPaste = (e: ClipboardEvent) => {
    const pasted = filesOf(e.clipboardData?.files);
    if (!pasted.length) return;
    e.preventDefault();
    attachments.add(pasted);
  };
  const ready = (draft.trim() || attachments.attached.length > 0) && !attachments.reading;
  return (
    <form className="composer" onSubmit={onSend}>
      <div className="composer-extras">
        <AttachmentChips items={attachments.attached} onRemove={attachments.remove} />
        {attachments.reading > 0 && (
          <p className="small muted" role="status">
            Preparing {attachments.reading === 1 ? "an attachment" : `${attachments.reading} attachments`}…
          </p>
        )}
        {attachments.error && (
          <p className="error small" role="alert">
            {attachments.error}
          </p>
        )}
      </div>
      <input
        ref={picker}
        id="attach-files"
        type="file"
        multiple
        hidden
        accept="image/png,image/jpeg,image/gif,image/webp,application/pdf,.csv,.tsv,.tab,.xlsx,.parquet"
        onChange={(e) => {
          attachments.add(filesOf(e.target.files));
          e.target.value = "";
        }}
      />
      <button
        type="button"
        className="attach"
        aria-label="Attach images, PDFs or table files"
        title="Attach images, PDFs (with the next question) or CSV, TSV, XLSX, Parquet files (as tables)"
        onClick={() => picker.current?.click()}
      >
        <PaperclipIcon />
      </button>
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
        onPaste={onPaste}
      />
      {streaming ? (
        <button type="button" className="danger" onClick={onStop}>
          Stop
        </button>
      ) : (
        <button type="submit" className="primary" disabled={!ready}>
          Send
        </button>
      )}
    </form>
  );
}
