/**
 * The header's bell: the unread count of the person's notifications (fired alerts, failed
 * scheduled runs), live; a list of the newest; choosing one marks it read and opens the schedule's
 * conversation, where the scheduled answer is.
 */
import { useEffect, useId, useRef, useState } from "react";
import type { Firestore } from "firebase/firestore";
import { plainLine, unreadLabel, useNotifications } from "./notifications";
import { BellIcon } from "../icons/Icons";

interface Props {
  db: Firestore;
  uid: string;
  /** Opens a conversation. */
  onOpenThread(threadId: string): void;
}

export function Bell({ db, uid, onOpenThread }: Props) {
  const { items, unread, error, markRead } = useNotifications(db, uid);
  const [open, setOpen] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const listId = useId();
  const box = useRef<HTMLDivElement>(null);
  const label = unreadLabel(unread, items.length);

  // A click outside or Escape closes the list.
  useEffect(() => {
    if (!open) return;
    const onDown = (e: MouseEvent) => {
      if (!box.current?.contains(e.target as Node)) setOpen(false);
    };
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && setOpen(false);
    document.addEventListener("mousedown", onDown);
    document.addEventListener("keydown", onKey);
    return () => {
      document.removeEventListener("mousedown", onDown);
      document.removeEventListener("keydown", onKey);
    };
  }, [open]);

  const choose = async (id: string, threadId: string, read: boolean) => {
    setProblem(null);
    try {
      if (!read) await markRead(id);
    } catch (e) {
      setProblem(`Could not mark it read: ${(e as Error).message}`);
    }
    setOpen(false);
    if (threadId) onOpenThread(threadId);
  };

  return (
    <div className="bell" ref={box}>
      <button
        type="button"
        className="icon"
        aria-label={`Notifications, ${unread} unread`}
        aria-expanded={open}
        aria-controls={listId}
        onClick={() => setOpen(!open)}
      >
        <BellIcon />
        {label && (
          <span className="badge unread" data-count={unread}>
            {label}
          </span>
        )}
      </button>
      {open && (
        <div id={listId} className="bell-list" role="region" aria-label="Notifications">
          {error && <p className="error small">{error}</p>}
          {problem && <p className="error small">{problem}</p>}
          {!items.length && !error && <p className="muted small">No notifications yet.</p>}
          <ul>
            {items.map((n) => (
              <li key={n.id} className={n.read ? "read" : "unread"}>
                <button type="button" onClick={() => void choose(n.id, n.threadId, n.read)}>
                  <strong className="title">{n.title}</strong>
                  {n.body && <span className="body small">{plainLine(n.body)}</span>}
                  <span className="time small muted">
                    {n.createdAt ? new Date(n.createdAt).toLocaleString() : "just now"}
                    {n.read ? "" : " · unread"}
                  </span>
                </button>
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}
