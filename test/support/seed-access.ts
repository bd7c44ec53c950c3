/**
 * Groups and members written straight into the stack's Firestore, as the admin page would leave
 * them, for tests that need people with known scopes; and a bounded wait on a condition (the
 * function reads access through a short cache).
 */
import type { Firestore } from "@google-cloud/firestore";
import { INTEGRATION_ACCESS_ENV, type TestUser } from "./auth-emulator";

/** How long the stacks' function keeps access it read (QUARRY_ACCESS_CACHE_SECONDS, both stacks). */
const ACCESS_CACHE_MS = Number(INTEGRATION_ACCESS_ENV.QUARRY_ACCESS_CACHE_SECONDS) * 1000;

/**
 * Waits out the function's access cache after writes that have returned: by then every instance's
 * copy was read after them (an entry lasts ACCESS_CACHE_MS from its read's start, lru.ts TtlCache),
 * whichever of the emulator's workers the next request reaches. A `/me` that shows the change
 * answers for one worker only.
 */
export async function accessSeenEverywhere(): Promise<void> {
  await new Promise((r) => setTimeout(r, ACCESS_CACHE_MS));
}

/**
 * Writes each group (name → datasets) and each member (with their role and groups), and returns once
 * every instance of the function sees them.
 */
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
  await accessSeenEverywhere();
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
