/**
 * A scheduled run's owner, checked before anything runs (schedules/run.ts with its dependencies
 * given, as the tick takes its own): a deleted or disabled account, sessions revoked since the
 * schedule was saved, or a member removed pauses the schedule saying why; Auth or Firestore not
 * answering skips the run without pausing; nothing runs in any of these.
 */
import { describe, expect, it, vi } from "vitest";
import { Timestamp } from "@google-cloud/firestore";
import type { Account, AccountGone } from "../../../functions/src/access/account";
import type { Access } from "../../../functions/src/access/gate";
import { QuarryError } from "../../../functions/src/errors";
import { runScheduled } from "../../../functions/src/schedules/run";
import type { ScheduleDoc } from "../../../functions/src/schedules/doc";

const SAVED_AT = Date.parse("2026-11-20T09:00:00Z");

function fixture() {
  const doc = {
    owner: "u1",
    ownerEmail: "old@example.com",
    ownerEmailVerified: true,
    ownerSavedAt: Timestamp.fromMillis(SAVED_AT),
    // Runs and an admin's pauses change the document later: only the owner's save counts.
    updatedAt: Timestamp.fromMillis(SAVED_AT + 3_600_000),
  } as unknown as ScheduleDoc;
  const recorded: { run: { error?: string | null }; opts?: { pause?: string } }[] = [];
  const store = {
    takeClaim: vi.fn(async () => doc),
    recordRun: vi.fn(async (_id: string, run: { error?: string | null }, opts?: { pause?: string }) => {
      recorded.push({ run, opts });
      return { paused: !!opts?.pause, failures: 0 };
    }),
    recordDelivery: vi.fn(async () => {}),
  };
  return { store, recorded };
}

const refused = (message: string) => async (): Promise<Access> => {
  throw new QuarryError("forbidden:not_member", message);
};
const account = (a: Account | AccountGone) => async () => a;
const live: Account = { email: "new@example.com", emailVerified: true, validSince: SAVED_AT - 60_000 };

describe("a scheduled run's owner", () => {
  const pausing: [string, Account | AccountGone, RegExp][] = [
    ["deleted", { gone: "deleted" }, /the account was deleted/],
    ["disabled", { gone: "disabled" }, /the account was disabled/],
    [
      "signed out everywhere since it was saved",
      { ...live, validSince: SAVED_AT + 1_000 },
      /sessions were revoked/,
    ],
  ];
  for (const [what, owner, reason] of pausing) {
    it(`pauses the schedule when the account was ${what}, running nothing`, async () => {
      const { store, recorded } = fixture();
      const gate = vi.fn(refused("never asked"));
      const report = await runScheduled(
        { scheduleId: "s1", claim: "c1" },
        { store, account: account(owner), access: gate },
      );
      expect(report).toMatchObject({ outcome: "skipped", paused: true });
      expect(recorded).toHaveLength(1);
      expect(recorded[0].opts?.pause).toMatch(reason);
      expect(gate).not.toHaveBeenCalled();
    });
  }

  it("asks the gate with the account's current email, and pauses on its refusal", async () => {
    const { store, recorded } = fixture();
    const gate = vi.fn(refused("new@example.com is not a member"));
    const report = await runScheduled(
      { scheduleId: "s1", claim: "c1" },
      { store, account: account(live), access: gate },
    );
    expect(gate).toHaveBeenCalledWith({ uid: "u1", email: "new@example.com", emailVerified: true });
    expect(report).toMatchObject({ outcome: "skipped", paused: true });
    expect(recorded[0].opts?.pause).toMatch(/new@example.com is not a member/);
  });

  it("skips without pausing when the account cannot be read now", async () => {
    const { store, recorded } = fixture();
    const report = await runScheduled(
      { scheduleId: "s1", claim: "c1" },
      {
        store,
        account: async () => {
          throw new Error("14 UNAVAILABLE");
        },
        access: refused("never asked"),
      },
    );
    expect(report).toMatchObject({ outcome: "skipped" });
    expect(report.paused).toBeUndefined();
    expect(recorded[0].opts?.pause).toBeUndefined();
    expect(recorded[0].run.error).toMatch(/could not be read now/);
  });

  it("does nothing for a claim already taken", async () => {
    const { store, recorded } = fixture();
    store.takeClaim.mockResolvedValueOnce(undefined as never);
    expect(await runScheduled({ scheduleId: "s1", claim: "c1" }, { store })).toEqual({ outcome: "not_run" });
    expect(recorded).toHaveLength(0);
  });
});
