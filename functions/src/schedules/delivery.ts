/**
 * Where a scheduled run's news goes: a notification document for the owner's page
 * (`notifications/{id}`, which rules let only them read and mark read), the schedule's chat webhook
 * (webhook-message.ts: the answer's first lines and a link, never rows), and mail through the
 * Firebase "Trigger Email" extension when `QUARRY_MAIL_COLLECTION` names its collection; and an
 * answer to the schedule's webhook and chat room (`deliver`).
 */
import { firstProseLine } from "./answer-text";
import { lookup, type LookupAddress } from "node:dns";
import { config } from "../config";
import { NOTIFICATIONS_COLLECTION, type ScheduleNotification } from "../contract/schedules";
import { firestore } from "../services";
import { privateAddress } from "./schema";
import { webhookMessage } from "./webhook-message";
import { appUrl, threadUrl } from "../runs/page-links";
import type { RoomAnswer, RoomDelivery } from "../runs/room-delivery";
import type { ScheduleDoc } from "./doc";
import * as logger from "firebase-functions/logger";

/** Webhook attempts, the wait before the second (doubling after), and each attempt's time limit. */
const WEBHOOK_ATTEMPTS = 3;
const WEBHOOK_BACKOFF_MS = 500;
const WEBHOOK_TIMEOUT_MS = 10_000;

/** A notification is deleted this long after it was written (Firestore TTL on `expireAt`). */
const NOTIFICATION_TTL_MS = 90 * 24 * 3_600_000;

/** What happened, for the owner. */
export interface RunNews {
  uid: string;
  email: string | null;
  scheduleId: string;
  /** The schedule's conversation. */
  threadId: string;
  name: string;
  /** One line: the alert's summary, or why the run failed. */
  title: string;
  /** The answer (Markdown) or the error, in words. */
  body: string;
  fired: boolean;
}

/** Writes the owner's notification document; returns its id. */
export async function notify(news: RunNews): Promise<string> {
  const [db, { Timestamp }] = await Promise.all([firestore(), import("firebase-admin/firestore")]);
  const ref = db.collection(NOTIFICATIONS_COLLECTION).doc();
  const note: ScheduleNotification<InstanceType<typeof Timestamp>> & { expireAt: unknown } = {
    uid: news.uid,
    scheduleId: news.scheduleId,
    threadId: news.threadId,
    title: news.title,
    body: firstProseLine(news.body),
    fired: news.fired,
    read: false,
    createdAt: Timestamp.now(),
    expireAt: Timestamp.fromMillis(Date.now() + NOTIFICATION_TTL_MS),
  };
  await ref.set(note);
  return ref.id;
}

/** Adds a Trigger Email document when mail is configured and the owner has an address. */
export async function mail(news: RunNews): Promise<void> {
  const collection = config().schedules.mailCollection;
  if (!collection || !news.email) return;
  const db = await firestore();
  await db.collection(collection).add({
    to: news.email,
    message: {
      subject: `Quarry: ${news.name} — ${news.title}`.slice(0, 200),
      text: `${news.title}\n\n${firstProseLine(news.body)}\n\nOpen in Quarry: ${threadUrl(appUrl(), news.threadId)}`,
    },
  });
}

/**
 * Posts the schedule's message to its webhook: up to {@link WEBHOOK_ATTEMPTS} tries with a
 * doubling wait, each cut at {@link WEBHOOK_TIMEOUT_MS}; a redirect is not followed (the URL was checked, where it points
 * to was not). Retries a network failure, 429 and 5xx. Returns undefined when delivered, else why
 * not, in words.
 */
export async function postWebhook(
  url: string,
  input: { name: string; threadId: string; answer?: string; alert?: string },
): Promise<string | undefined> {
  const body = JSON.stringify(webhookMessage({ ...input, appUrl: appUrl() }));
  let problem = "";
  for (let attempt = 1; attempt <= WEBHOOK_ATTEMPTS; attempt++) {
    if (attempt > 1) await new Promise((r) => setTimeout(r, WEBHOOK_BACKOFF_MS * 2 ** (attempt - 2)));
    try {
      const { fetch, Agent } = await import("undici");
      dispatcher ??= new Agent({ connect: { lookup: publicLookup } });
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json; charset=utf-8" },
        body,
        redirect: "manual",
        signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
        dispatcher,
      });
      await res.body?.cancel().catch(() => {});
      if (res.ok) return undefined;
      problem = `the webhook answered HTTP ${res.status}`;
      if (res.status !== 429 && res.status < 500) break;
    } catch (err) {
      const e = err as Error & { cause?: Error };
      problem =
        e.name === "TimeoutError"
          ? `the webhook did not answer within ${WEBHOOK_TIMEOUT_MS / 1000} s`
          : `the webhook could not be reached (${e.cause?.message ?? e.message})`;
      // A host that points inside stays so: not worth another try.
      if (e.cause?.message.includes(PRIVATE_HOST)) break;
    }
  }
  return `${problem}; check the webhook URL (the message was not delivered)`;
}

let dispatcher: import("undici").Agent | undefined;
const PRIVATE_HOST = "its host resolves to a private address";

/**
 * DNS for webhook connections: a host name that resolves to this machine or a private network is
 * refused at connect time (the URL's literal host was checked when it was saved; this covers a
 * public name pointing inside, and a name that changes its answer after the check).
 */
function publicLookup(
  host: string,
  options: { all?: boolean },
  callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void,
): void {
  lookup(host, { ...options, all: true }, (err, addresses) => {
    const inside = addresses?.find((a) => privateAddress(a.address));
    if (err || inside || !addresses.length) {
      const why = inside ? `${PRIVATE_HOST} (${inside.address})` : `${host} not found`;
      return callback(err ?? new Error(why), options.all ? [] : "", 0);
    }
    // The caller's form: every address (`all`, as Node's happy-eyeballs asks) or the first.
    if (options.all) callback(null, addresses);
    else callback(null, addresses[0].address, addresses[0].family);
  });
}

/** What a scheduled run that answered hands on to its webhook and room. */
export interface DeliveredRun {
  runId: string;
  answer?: string;
  questionId?: string;
  result?: NonNullable<RoomAnswer["result"]>;
}

/** Posts to the webhook and to the room; what went wrong, in words (each names where). */
export async function deliver(
  doc: ScheduleDoc,
  id: string,
  ran: DeliveredRun,
  alert: string | undefined,
  rooms: RoomDelivery | undefined,
): Promise<string[]> {
  const problems: string[] = [];
  if (doc.webhook) {
    const problem = await postWebhook(doc.webhook, {
      name: doc.name,
      threadId: doc.scheduleThreadId,
      ...(ran.answer ? { answer: ran.answer } : {}),
      ...(alert ? { alert } : {}),
    });
    if (problem) problems.push(problem);
  }
  if (doc.room) {
    const answer: RoomAnswer = {
      uid: doc.owner,
      scheduleId: id,
      name: doc.name,
      threadId: doc.scheduleThreadId,
      questionId: ran.questionId ?? "",
      runId: ran.runId,
      answer: ran.answer ?? "",
      ...(ran.result ? { result: ran.result } : {}),
      sql: doc.sql,
      ...(alert ? { alert } : {}),
    };
    const problem = rooms
      ? await rooms.post(doc.room, answer).catch((err: unknown) => {
          logger.error("room delivery failed", { id, err: String(err) });
          return "the chat room could not be reached: the answer was not posted there";
        })
      : "chat rooms cannot be delivered to here";
    if (problem) problems.push(`${doc.room}: ${problem}`);
  }
  return problems;
}
