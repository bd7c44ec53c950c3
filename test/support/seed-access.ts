/**
 * Groups and members written straight into the stack's Firestore, as the admin page would leave
 * them, for tests that need people with known scopes; and a bounded wait on a condition (the
 * function reads access through a short cache).
 */
import type { Firestore } from "@google-cloud/firestore";
import type { TestUser } from "./auth-emulator";

/** Writes each group (name → datasets) and each member (with their role and groups). */
export async function seedAccess(
  db: Firestore,
  groups: Record<string, readonly string[]>,
  members: readonly (readonly [TestUser, "admin" | "member", readonly string[]])[],
): Promise<void> {
  const now = new Date().toISOString();
  for (const [name, datasets] of Object.entries(groups)) {
    await db
      .collection("groups")
      .doc(name)
      .set({ name, datasets, createdBy: "test", createdAt: now, updatedAt: now });
  }
  for (const [u, role, inGroups] of members) {
    await db
      .collection("members")
      .doc(u.email)
      .set({ email: u.email, role, groups: inGroups, addedBy: "test", addedAt: now, updatedAt: now });
  }
}

/**
 * Reads `read` until `done` holds, failing with the last value after `timeoutMs`. Hooks cannot
 * use expect.poll.
 */
export async function until<T>(
  read: () => Promise<T>,
  done: (v: T) => boolean,
  timeoutMs = 30_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > end) throw new Error(`still ${JSON.stringify(v).slice(0, 500)} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
