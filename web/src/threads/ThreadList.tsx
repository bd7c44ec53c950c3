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
  const [draft, setDraft] = useState("");
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

  const submitRename = (e: FormEvent, id: string) => {
    e.preventDefault();
    const title = draft.trim();
    setEditing(null);
    if (title) void act(id, () => onRename(id, title));
  };

  const onEditKey = (e: KeyboardEvent) => {
    if (e.key === "Escape") setEditing(null);
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
                <form onSubmit={(e) => submitRename(e, t.id)} className="rename">
                  <label className="sr-only" htmlFor={`rename-${t.id}`}>
                    New title
                  </label>
                  <input
                    id={`rename-${t.id}`}
                    autoFocus
                    maxLength={MAX_TITLE_CHARS}
                    value={draft}
                    onChange={(e) => setDraft(e.target.value)}
                    onKeyDown={onEditKey}
                  />
                  <button type="submit">Save</button>
                  <button type="button" onClick={() => setEditing(null)}>
                    Cancel
                  </button>
                </form>
              ) : (
                <>
                  <button
                    type="button"
                    className="thread-open"
                    aria-current={t.id === currentId ? "page" : undefined}
                    onClick={() => onSelect(t.id)}
                    disabled={busy === t.id}
                  >
                    <span className="thread-title">{t.title || "Untitled conversation"}</span>
                    <span className="thread-when">{when(t.updatedAt)}</span>
                  </button>
                  <span className="thread-actions">
                    <button
                      type="button"
                      className="icon"
                      aria-label={`Rename “${t.title || "Untitled conversation"}”`}
                      title="Rename"
                      onClick={() => {
                        setDraft(t.title);
                        setEditing(t.id);
                      }}
                    >
                      ✎
                    </button>
                    <button
                      type="button"
                      className="icon"
                      aria-label={`Delete “${t.title || "Untitled conversation"}”`}
                      title="Delete"
                      onClick={() => {
                        if (
                          window.confirm(
                            `Delete “${t.title || "Untitled conversation"}”? This cannot be undone.`,
                          )
                        ) {
                          void act(t.id, () => onDelete(t.id));
                        }
                      }}
                    >
                      ✕
                    </button>
                  </span>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
    </nav>
  );
}
