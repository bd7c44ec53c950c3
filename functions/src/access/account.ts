/**
 * A person's Firebase account as Auth holds it now: the one check every caller that acts for a
 * person without a fresh ID token makes (an MCP personal or OAuth token, a scheduled run). A
 * disabled or deleted account acts for nobody, and revoking an account's sessions ("sign out
 * everywhere") ends what was granted before it.
 */
import { config } from "../config";
import { TtlCache } from "../lru";
import { adminAuth } from "../services";

/** People one instance remembers the account of, for the access cache's time. */
const CACHED_ACCOUNTS = 10_000;

/** The account: its email, whether that is verified, and since when its sessions are valid (ms). */
export interface Account {
  email?: string;
  emailVerified: boolean;
  validSince: number | undefined;
}

/** Why an account acts for nobody. */
export type AccountGone = { gone: "disabled" | "deleted" };

const accounts = new TtlCache<string, Account | AccountGone>(CACHED_ACCOUNTS, () => config().access.cacheMs);

/**
 * The account of `uid`, or why it is gone. Cached per instance as long as the members cache (so a
 * token stops within the same window); `fresh` reads it now (a scheduled run, before it acts).
 */
export function currentAccount(uid: string, { fresh = false } = {}): Promise<Account | AccountGone> {
  return accounts.get(uid, () => readAccount(uid), { fresh });
}

async function readAccount(uid: string): Promise<Account | AccountGone> {
  const auth = await adminAuth();
  try {
    const user = await auth.getUser(uid);
    if (user.disabled) return { gone: "disabled" };
    const validSince = user.tokensValidAfterTime ? Date.parse(user.tokensValidAfterTime) : undefined;
    return { email: user.email, emailVerified: user.emailVerified, validSince };
  } catch (err) {
    if ((err as { code?: string }).code === "auth/user-not-found") return { gone: "deleted" };
    throw err;
  }
}

/** Whether what was granted at `grantedAt` (ms) was revoked since: the account's sessions were. */
export function revokedSince(account: Account, grantedAt: number): boolean {
  return account.validSince !== undefined && grantedAt < account.validSince;
}
