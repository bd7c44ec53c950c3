/**
 * The bell's notifications, live from Firestore: `notifications` where `uid == me`, newest first,
 * the latest {@link MAX_NOTIFICATIONS} (the rules allow exactly this query; the composite index
 * (uid, createdAt desc) is in firestore.indexes.json). Marking one read changes `read` only, the one
 * field the rules let its person change.
 */
import { useCallback, useEffect, useState } from "react";
import {
  collection,
  doc,
  limit,
  onSnapshot,
  orderBy,
  query,
  updateDoc,
  where,
  type Firestore,
} from "firebase/firestore";
import { NOTIFICATIONS_COLLECTION, type ScheduleNotification } from "@quarry/functions/contract";

/** How many of the newest notifications the bell lists. */
export const MAX_NOTIFICATIONS = 20;

/** A notification as the bell shows it. */
export type NotificationItem = Omit<ScheduleNotification, "createdAt"> & {
  id: string;
  /** Milliseconds since the epoch (0 while the server's time is pending). */
  createdAt: number;
};

/** How many of the listed notifications are unread. */
export function unreadCount(items: readonly Pick<NotificationItem, "read">[]): number {
  return items.reduce((n, item) => n + (item.read ? 0 : 1), 0);
}

/** The badge's text: nothing at 0, "20+" when every listed one is unread (older ones may be too). */
export function unreadLabel(unread: number, listed: number): string {
  if (unread === 0) return "";
  return unread >= MAX_NOTIFICATIONS && listed >= MAX_NOTIFICATIONS
    ? `${MAX_NOTIFICATIONS}+`
    : String(unread);
}

/** A line of the answer's Markdown as plain text for the list: code spans and bold lose their marks. */
export function plainLine(markdown: string): string {
  return markdown
    .replace(/`([^`]*)`/g, "$1")
    .replace(/\*\*([^*]+)\*\*/g, "$1")
    .replace(/\[([^\]]+)\]\([^)]*\)/g, "$1");
}

function millis(v: unknown): number {
  return v && typeof (v as { toMillis?: unknown }).toMillis === "function"
    ? (v as { toMillis(): number }).toMillis()
    : 0;
}

/** The signed-in person's notifications, live; `markRead` sets `read: true` on one. */
export function useNotifications(db: Firestore, uid: string) {
  const [items, setItems] = useState<NotificationItem[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const q = query(
      collection(db, NOTIFICATIONS_COLLECTION),
      where("uid", "==", uid),
      orderBy("createdAt", "desc"),
      limit(MAX_NOTIFICATIONS),
    );
    return onSnapshot(
      q,
      (snap) => {
        setItems(
          snap.docs.map((d) => {
            const data = d.data() as ScheduleNotification;
            return {
              id: d.id,
              uid: String(data.uid),
              scheduleId: String(data.scheduleId ?? ""),
              threadId: String(data.threadId ?? ""),
              title: String(data.title ?? ""),
              body: String(data.body ?? ""),
              fired: data.fired === true,
              read: data.read === true,
              createdAt: millis(data.createdAt),
            };
          }),
        );
        setError(null);
      },
      (e) => setError(`Notifications cannot be shown: ${e.message}`),
    );
  }, [db, uid]);
  const markRead = useCallback(
    (id: string) => updateDoc(doc(db, NOTIFICATIONS_COLLECTION, id), { read: true }),
    [db],
  );
  return { items, unread: unreadCount(items), error, markRead };
}
