/**
 * The tick (`scheduleTick`, an `onSchedule` function every QUARRY_SCHEDULE_TICK_MINUTES): finds
 * the schedules due now, claims each in a transaction that moves its `nextRunAt` on (store.ts), and
 * queues one run per claim. Two ticks that overlap both see a due schedule, but only one claim
 * succeeds, so it runs once. A tick that dies after claiming loses that run (the next fire time
 * stands): a missed run is better than a repeated one.
 */
import { randomUUID } from "node:crypto";
import * as logger from "firebase-functions/logger";
import { nextRunAt } from "./next-run";
import { enqueueScheduledRun, type ScheduledTask } from "./queue";
import { scheduleStore } from "./store";

/** Schedules one tick claims at most; the rest are due still and the next tick takes them. */
const TICK_LIMIT = 200;

/** What a tick may be given (tests: a fixed time, their own queue, a hold between query and claim). */
export interface TickOptions {
  now?: Date;
  limit?: number;
  enqueue?: (task: ScheduledTask) => Promise<void>;
  /** Called with the due schedules' ids after the query, before any claim. */
  afterQuery?: (ids: string[]) => Promise<void> | void;
}

/** One tick; returns the ids of the schedules it claimed (and queued). */
export async function runScheduleTick(opts: TickOptions = {}): Promise<string[]> {
  const now = opts.now ?? new Date();
  const tickId = randomUUID();
  const store = await scheduleStore();
  const due = await store.due(now, opts.limit ?? TICK_LIMIT);
  await opts.afterQuery?.(due.map((d) => d.id));
  const enqueue = opts.enqueue ?? enqueueScheduledRun;
  const claimed = await Promise.all(
    due.map(async ({ id, nextRunAt: seen }) => {
      const claim = await store.claim(id, seen, now, tickId, nextRunAt).catch((err: unknown) => {
        logger.warn("schedule not claimed", { id, err: String(err) });
        return undefined;
      });
      if (!claim) return undefined;
      try {
        await enqueue({ scheduleId: id, claim });
        return id;
      } catch (err) {
        logger.error("scheduled run not queued; it runs at its next time", { id, err: String(err) });
        return undefined;
      }
    }),
  );
  const ids = claimed.filter((id): id is string => id !== undefined);
  if (due.length) logger.info("schedule tick", { tickId, due: due.length, claimed: ids.length });
  return ids;
}
