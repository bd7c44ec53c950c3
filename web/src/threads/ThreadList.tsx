/** The thread list: new conversation, pick one, rename in place, delete after confirming. */
import { MAX_TITLE_CHARS } from "@quarry/functions/contract";
import { useState, type FormEvent, type KeyboardEvent } from "react";
import type { ThreadSummary } from "./useThreads";

interface Props {
  threads: ThreadSummary[] | null;
  currentId: string | null;
  error: string | null;
  onSelect(id: string): void;
  onNew(): void;
  onRename(id: string, title: string): Promise<void>;
  onDelete(id: string): Promise<void>;
}

const when = (ms: number) =>
  ms
    ? new Date(ms).toLocaleString(undefined, {
        month: "short",
        day: "numeric",
        hour: "2-digit",
        minute: "2-digit",
      })
    : "";

export function ThreadList({ threads, currentId, error, onSelect, onNew, onRename, onDelete }: Props) {
  const [editing, setEditing] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);

  const act = async (id: string, fn: () => Promise<void>) => {
    setBusy(id);
    setFailure(null);
    try {
      await fn();
    } catch (e) {
      setFailure((e as Error).message);
    } finally {
      setBusy(null);
    }
  };

  return (
    <nav className="threads" aria-label="Conversations">
      <button type="button" className="primary wide" onClick={onNew}>
        + New conversation
      </button>
      {error && (
        <p role="alert" className="error small">
          {error}
        </p>
      )}
      {failure && (
        <p role="alert" className="error small">
          {failure}
        </p>
      )}
      {threads === null ? (
        <p className="muted small">Loading conversations…</p>
      ) : threads.length === 0 ? (
        <p className="muted small">No conversations yet. Ask a question to start one.</p>
      ) : (
        <ul className="thread-items">
          {threads.map((t) => (
            <li key={t.id} className={t.id === currentId ? "current" : undefined} data-thread-id={t.id}>
              {editing === t.id ? (
                <RenameForm
                  thread={t}
                  onDone={(title) => {
                    setEditing(null);
                    if (title) void act(t.id, () => onRename(t.id, title));
                  }}
                />
              ) : (
                <ThreadItem
                  thread={t}
                  current={t.id === currentId}
                  busy={busy === t.id}
                  onSelect={() => onSelect(t.id)}
                  onRename={() => setEditing(t.id)}
                  onDelete={() => void act(t.id, () => onDelete(t.id))}
                />
              )}
            </li>
          ))}
        </ul>
      )}
    </nav>
  );
}

/** Renaming a thread in place: Enter saves, Escape or Cancel leaves the title as it was. */
function RenameForm({ thread, onDone }: { thread: ThreadSummary; onDone(title: string | null): void }) {
  const [draft, setDraft] = useState(thread.title);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    onDone(draft.trim() || null);
  };

  const onEditKey = (e: KeyboardEvent) => {
    if (e.key === "Escape") onDone(null);
  };

  return (
    <form onSubmit={submit} className="rename">
      <label className="sr-only" htmlFor={`rename-${thread.id}`}>
        New title
      </label>
      <input
        id={`rename-${thread.id}`}
        autoFocus
        maxLength={MAX_TITLE_CHARS}
        value={draft}
        onChange={(e) => setDraft(e.target.value)}
        onKeyDown={onEditKey}
      />
      <button type="submit">Save</button>
      <button type="button" onClick={() => onDone(null)}>
        Cancel
      </button>
    </form>
  );
}

/** One thread: open it, or rename or delete it (after confirming). */
function ThreadItem(props: {
  thread: ThreadSummary;
  current: boolean;
  busy: boolean;
  onSelect(): void;
  onRename(): void;
  onDelete(): void;
}) {
  const { thread: t } = props;
  const title = t.title || "Untitled conversation";
  return (
    <>
      <button
        type="button"
        className="thread-open"
        aria-current={props.current ? "page" : undefined}
        onClick={props.onSelect}
        disabled={props.busy}
      >
        <span className="thread-title">{title}</span>
        <span className="thread-when">{when(t.updatedAt)}</span>
      </button>
      <span className="thread-actions">
        <button
          type="button"
          className="icon"
          aria-label={`Rename “${title}”`}
          title="Rename"
          onClick={props.onRename}
        >
          ✎
        </button>
        <button
          type="button"
          className="icon"
          aria-label={`Delete “${title}”`}
          title="Delete"
          onClick={() => {
            if (window.confirm(`Delete “${title}”? This cannot be undone.`)) props.onDelete();
          }}
        >
          ✕
        </button>
      </span>
    </>
  );
}
