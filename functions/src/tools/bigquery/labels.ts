/** BigQuery labels on Quarry's jobs and tables: who and which conversation they are for. */

/** A label value: lower-case letters, digits, _ and -, at most 63 characters (BigQuery's rule). */
export function labelValue(s: string): string {
  return (
    s
      .toLowerCase()
      .replace(/[^a-z0-9_-]/g, "_")
      .slice(0, 63) || "none"
  );
}

/** The labels every Quarry job or table carries: the app, the person, the conversation. */
export function quarryLabels(who: { userId: string; threadId: string }): Record<string, string> {
  return { app: "quarry", quarry_user: labelValue(who.userId), quarry_thread: labelValue(who.threadId) };
}
