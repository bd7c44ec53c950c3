/**
 * Per-person quotas: questions per minute, bytes billed and model tokens per day (UTC).
 *
 * A run start is admitted in one Firestore transaction over the person's recent questions (a
 * sliding window: the times of the questions admitted in the last minute, `quota_rate/{uid}`) and today's usage (`usage/{uid}_{day}`): it cannot overshoot, however many
 * instances start runs at once. Bytes and tokens are charged as they are spent (when the run lets
 * go of its thread), so a day's total is exact; a query whose estimate exceeds what is left of the
 * day is refused by the warehouse like the per-thread budget. Usage documents carry `expireAt`
 * (90 days) for a TTL policy.
 */
import type { DocumentReference, Firestore } from "firebase-admin/firestore";
import type { QuotaFigure, QuotaLimits, Quotas } from "../contract/access";
import { QuarryError } from "../errors";
import type { Via } from "../tools/person";
import { isAlreadyExists, isStale } from "../storage";

/** Tries of one admission before a storage error (each lost only to another admission). */
const MAX_ATTEMPTS = 100;

/** Days a person's daily usage is kept. */
const USAGE_KEEP_DAYS = 90;

/** Today's usage of one person, as stored. */
export interface UsageDay {
  uid: string;
  email: string | null;
  day: string;
  questions: number;
  bytes: number;
  tokens: number;
}

/** A charge to merge into a person's day (`ref.set(fields, { merge: true })`, in whatever commit carries it). */
export interface ChargeWrite {
  ref: DocumentReference;
  fields: Record<string, unknown>;
}

/** What a run start learns: the quotas as they stand after admitting it. */
export interface Admission {
  quotas: Quotas;
  /** Bytes the person may still bill today (for the warehouse's budget check). */
  bytesLeft: number;
}

const DAY_MS = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const nextDay = (ms: number) => Math.floor(ms / DAY_MS + 1) * DAY_MS;

/** Words for a byte count ("1.5 GB"), decimal as quotas are set. */
function bytesInWords(n: number): string {
  const units = ["B", "KB", "MB", "GB", "TB", "PB"];
  let v = n;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${Number(v.toFixed(v < 10 && i > 0 ? 1 : 0)).toLocaleString("en-US")} ${units[i]}`;
}

/** The recent questions' admission times (ms) still inside the window, oldest first. */
export function recentQuestions(
  rate: { times?: number[] } | undefined,
  now: number,
  windowMs: number,
): number[] {
  return (rate?.times ?? []).filter((t) => t > now - windowMs).sort((a, b) => a - b);
}

/** The quotas as the page sees them, from the stored counters (`recent`: admission times in the window). */
export function quotaFigures(
  limits: QuotaLimits,
  day: Pick<UsageDay, "bytes" | "tokens"> | undefined,
  recent: number[],
  now: number,
  windowMs: number,
): Quotas {
  const figure = (used: number, limit: number, resetsAt: number): QuotaFigure => ({
    used,
    limit,
    resetsAt: new Date(resetsAt).toISOString(),
  });
  // With the window full, a question can be asked again when enough of the oldest have left it.
  const over = recent.length - limits.questionsPerMinute;
  const freesAt = over >= 0 && recent.length ? recent[over] + windowMs : now + windowMs;
  return {
    questionsPerMinute: figure(recent.length, limits.questionsPerMinute, freesAt),
    bytesPerDay: figure(day?.bytes ?? 0, limits.bytesPerDay, nextDay(now)),
    tokensPerDay: figure(day?.tokens ?? 0, limits.tokensPerDay, nextDay(now)),
  };
}

/** The refusal for the first quota used up, or undefined when a new question fits. */
export function overQuota(q: Quotas, now: number): QuarryError | undefined {
  const retry = (f: QuotaFigure) => Math.max(1, Math.ceil((Date.parse(f.resetsAt) - now) / 1000));
  const at = (f: QuotaFigure) => new Date(f.resetsAt).toISOString().replace(".000Z", "Z");
  if (q.bytesPerDay.used >= q.bytesPerDay.limit) {
    return quotaError(
      "quota:bytes",
      retry(q.bytesPerDay),
      `You have used today's query budget: ${bytesInWords(q.bytesPerDay.used)} of ${bytesInWords(q.bytesPerDay.limit)} billed. ` +
        `It resets at ${at(q.bytesPerDay)} (midnight UTC); an admin can raise your limit.`,
    );
  }
  if (q.tokensPerDay.used >= q.tokensPerDay.limit) {
    return quotaError(
      "quota:tokens",
      retry(q.tokensPerDay),
      `You have used today's model budget: ${q.tokensPerDay.used.toLocaleString("en-US")} of ` +
        `${q.tokensPerDay.limit.toLocaleString("en-US")} tokens. It resets at ${at(q.tokensPerDay)} (midnight UTC); ` +
        "an admin can raise your limit.",
    );
  }
  if (q.questionsPerMinute.used >= q.questionsPerMinute.limit) {
    const s = retry(q.questionsPerMinute);
    return quotaError(
      "quota:questions",
      s,
      `You have asked ${q.questionsPerMinute.used} questions in the last minute; the limit is ${q.questionsPerMinute.limit}. ` +
        `Ask again in ${s} s.`,
    );
  }
  return undefined;
}

function quotaError(
  code: "quota:questions" | "quota:bytes" | "quota:tokens",
  retryAfterS: number,
  message: string,
) {
  return new QuarryError(code, message, { headers: { "Retry-After": String(retryAfterS) } });
}

/** Whose usage it is, and the way it came in when not the page (`mcp`, a chat app: counted apart as well). */
type Who = { uid: string; email: string | null; via?: Via["channel"] };

export class QuotaStore {
  constructor(
    private readonly db: Firestore,
    private readonly fieldValue: typeof import("firebase-admin/firestore").FieldValue,
    private readonly timestamp: typeof import("firebase-admin/firestore").Timestamp,
    /** The questions quota's sliding window (60 s: "per minute"). */
    private readonly windowMs = 60_000,
    private readonly collections = { usage: "usage", rate: "quota_rate" },
  ) {}

  private usageRef(uid: string, day: string) {
    return this.db.collection(this.collections.usage).doc(`${uid}_${day}`);
  }

  private rateRef(uid: string) {
    return this.db.collection(this.collections.rate).doc(uid);
  }

  /** The person's quotas now (GET /me). */
  async figures(uid: string, limits: QuotaLimits): Promise<Quotas> {
    const now = Date.now();
    const [day, rate] = await this.db.getAll(this.usageRef(uid, dayOf(now)), this.rateRef(uid));
    const recent = recentQuestions(rate.data() as { times?: number[] } | undefined, now, this.windowMs);
    return quotaFigures(limits, day.data() as UsageDay | undefined, recent, now, this.windowMs);
  }

  /**
   * Admits one question, atomically: 429 (a QuarryError with Retry-After) when a quota is used up,
   * else counts it. Optimistic, without a transaction (contended transactions queue on the
   * document's lock): the window is read, then written with a precondition on the update time as
   * read, together with the day's count; a write that lost the race reads again and decides again.
   * No two starts can take the same place, so the limit is never overshot.
   */
  async admit(who: Who, limits: QuotaLimits): Promise<Admission> {
    const rateRef = this.rateRef(who.uid);
    for (let attempt = 0; ; attempt++) {
      const now = Date.now();
      const day = dayOf(now);
      const [usage, rate] = await this.db.getAll(this.usageRef(who.uid, day), rateRef);
      const recent = recentQuestions(rate.data() as { times?: number[] } | undefined, now, this.windowMs);
      const quotas = quotaFigures(limits, usage.data() as UsageDay | undefined, recent, now, this.windowMs);
      const refused = overQuota(quotas, now);
      if (refused) throw refused;
      const batch = this.db.batch();
      const times = { times: [...recent, now] };
      if (rate.exists) batch.update(rateRef, times, { lastUpdateTime: rate.updateTime! });
      else batch.create(rateRef, times);
      batch.set(this.usageRef(who.uid, day), this.dayFields(who, day, { questions: 1 }), { merge: true });
      try {
        await batch.commit();
      } catch (err) {
        if (!(isStale(err) || isAlreadyExists(err)) || attempt >= MAX_ATTEMPTS) throw err;
        // Someone else took a place meanwhile: read again, after a short random pause.
        await new Promise((r) => setTimeout(r, Math.random() * 10 * Math.min(attempt + 1, 5)));
        continue;
      }
      quotas.questionsPerMinute.used++;
      return { quotas, bytesLeft: Math.max(limits.bytesPerDay - quotas.bytesPerDay.used, 0) };
    }
  }

  /**
   * Refuses a file of `bytes` that today's byte budget cannot take (an upload counts against the
   * day's bytes like a query's bytes billed); the caller charges it once the file is kept.
   */
  async admitUpload(who: Who, limits: QuotaLimits, bytes: number): Promise<void> {
    const q = await this.figures(who.uid, limits);
    const refused = overQuota({ ...q, questionsPerMinute: { ...q.questionsPerMinute, used: 0 } }, Date.now());
    if (refused) throw refused;
    const left = q.bytesPerDay.limit - q.bytesPerDay.used;
    if (bytes > left) {
      const retry = Math.max(1, Math.ceil((Date.parse(q.bytesPerDay.resetsAt) - Date.now()) / 1000));
      throw quotaError(
        "quota:bytes",
        retry,
        `This file (${bytesInWords(bytes)}) is more than is left of today's budget (${bytesInWords(Math.max(left, 0))} of ` +
          `${bytesInWords(q.bytesPerDay.limit)}); uploads count against it like queries. It resets at midnight UTC; ` +
          "send a smaller file or ask an admin to raise your limit.",
      );
    }
  }

  /** Charges what a run spent (bytes billed, model tokens) to today's usage. */
  async charge(who: Who, spent: { bytes: number; tokens: number }): Promise<void> {
    const write = this.chargeWrite(who, spent);
    if (write) await write.ref.set(write.fields, { merge: true });
  }

  /**
   * The charge as a write for another commit or transaction to carry (the run's release): merged
   * into `ref` (increments); undefined when nothing was spent.
   */
  chargeWrite(who: Who, spent: { bytes: number; tokens: number }): ChargeWrite | undefined {
    if (!spent.bytes && !spent.tokens) return;
    const day = dayOf(Date.now());
    return { ref: this.usageRef(who.uid, day), fields: this.dayFields(who, day, spent) };
  }

  /** Usage per person per day over `days` days up to today (admin page). */
  async usage(days: number): Promise<UsageDay[]> {
    const since = dayOf(Date.now() - (days - 1) * DAY_MS);
    const snap = await this.db
      .collection(this.collections.usage)
      .where("day", ">=", since)
      .limit(10_000)
      .get();
    return snap.docs.map((d) => {
      const u = d.data() as UsageDay;
      return {
        uid: u.uid,
        email: u.email ?? null,
        day: u.day,
        questions: u.questions ?? 0,
        bytes: u.bytes ?? 0,
        tokens: u.tokens ?? 0,
      };
    });
  }

  private dayFields(who: Who, day: string, add: Partial<Record<"questions" | "bytes" | "tokens", number>>) {
    const inc = Object.fromEntries(
      Object.entries(add)
        .filter(([, v]) => v)
        .map(([k, v]) => [k, this.fieldValue.increment(v!)]),
    );
    return {
      uid: who.uid,
      email: who.email,
      // What came through MCP or a chat app is counted apart too, so an admin can tell it from the page's.
      ...(who.via && Object.keys(inc).length ? { [who.via]: inc } : {}),
      day,
      expireAt: this.timestamp.fromMillis(nextDay(Date.parse(`${day}T00:00:00Z`)) + USAGE_KEEP_DAYS * DAY_MS),
      ...inc,
    };
  }
}
