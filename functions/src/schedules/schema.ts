/**
 * Request schemas for the schedules API (`POST /schedules`, `PATCH /schedules/:id`), strict like the
 * rest of the API: an unknown field is named. Read them with `parse()` from `http/schemas`, which
 * turns every problem into one 400 that lists `field: what to fix`.
 */
import { BlockList, isIP } from "node:net";
import { z } from "zod";
import { CHAT_ROOM, CHAT_ROOM_FORMAT } from "../contract/chat";
import { MAX_QUESTION_CHARS } from "../contract/limits";
import { ThreadIdParam } from "../runs/schemas";
import { MAX_SQL_CHARS } from "../tools/policy";
import { AlertConditionSpec } from "./alerts";
import { ScheduleSpec } from "./cadence";

/** Longest schedule name, characters. */
const MAX_SCHEDULE_NAME_CHARS = 100;
/** Longest webhook URL; Slack's and Google Chat's are about 150–250 characters. */
const MAX_WEBHOOK_CHARS = 2_000;

/** How the schedule schemas are built. */
export interface ScheduleSchemaOptions {
  /**
   * Accept `http://127.0.0.1:<port>/…` webhooks too, for tests with a loopback receiver. Off in
   * production: a webhook carries an answer's first lines, so it goes over https only.
   */
  allowLoopbackWebhook?: boolean;
}

/**
 * A webhook target's problem, or undefined when it is fine: https to a named host (a Google Chat or
 * Slack incoming webhook), no credentials in the URL. Hosts that are this machine or a private
 * network (localhost, 10.x, 192.168.x, 169.254.x, 100.64.x, NAT64 … — privateAddress) are refused, so a schedule cannot be used to
 * reach inside the project's network; delivery must still not follow redirects.
 */
function webhookProblem(raw: string, options: ScheduleSchemaOptions): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "must be a full URL starting with https://";
  }
  if (url.username || url.password) return "must not carry a user name or password";
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (url.protocol === "http:" && options.allowLoopbackWebhook && host === "127.0.0.1") return undefined;
  if (url.protocol !== "https:") return "must use https:// (a Google Chat or Slack incoming-webhook URL)";
  if (host === "localhost" || host.endsWith(".localhost") || privateAddress(host)) {
    return "must point at a public host (a Google Chat or Slack incoming webhook), not this machine or a private network";
  }
  return undefined;
}

/**
 * Addresses a webhook must never reach (IANA's special-purpose registries): this machine, private and
 * shared networks (RFC 1918, carrier-grade NAT 100.64.0.0/10), link-local, documentation,
 * benchmarking, multicast and reserved ranges, and the IPv6 forms that can carry an IPv4 address
 * inside (mapped, NAT64 64:ff9b::/96 and its local-use /48, 6to4, Teredo).
 */
const SPECIAL_USE = (() => {
  // One list per family: Node matches an IPv4 address against IPv4-mapped IPv6 subnets too.
  const ipv4 = new BlockList();
  const ipv6 = new BlockList();
  const v4: [string, number][] = [
    ["0.0.0.0", 8],
    ["10.0.0.0", 8],
    ["100.64.0.0", 10],
    ["127.0.0.0", 8],
    ["169.254.0.0", 16],
    ["172.16.0.0", 12],
    ["192.0.0.0", 24],
    ["192.0.2.0", 24],
    ["192.88.99.0", 24],
    ["192.168.0.0", 16],
    ["198.18.0.0", 15],
    ["198.51.100.0", 24],
    ["203.0.113.0", 24],
    ["224.0.0.0", 4],
    ["240.0.0.0", 4],
  ];
  const v6: [string, number][] = [
    ["::", 128],
    ["::1", 128],
    ["::ffff:0:0", 96],
    ["64:ff9b::", 96],
    ["64:ff9b:1::", 48],
    ["100::", 64],
    ["2001::", 23],
    ["2001:db8::", 32],
    ["2002::", 16],
    ["fc00::", 7],
    ["fe80::", 10],
    ["fec0::", 10],
    ["ff00::", 8],
  ];
  for (const [net, prefix] of v4) ipv4.addSubnet(net, prefix, "ipv4");
  for (const [net, prefix] of v6) ipv6.addSubnet(net, prefix, "ipv6");
  return { ipv4, ipv6 };
})();

/** Whether an IPv4 or IPv6 literal is special-use (also checked on what a webhook host resolves to). */
export function privateAddress(host: string): boolean {
  const kind = isIP(host);
  if (kind === 0) return false;
  return kind === 4 ? SPECIAL_USE.ipv4.check(host, "ipv4") : SPECIAL_USE.ipv6.check(host, "ipv6");
}

function webhook(options: ScheduleSchemaOptions) {
  return z
    .string({ message: "webhook must be a URL starting with https://" })
    .trim()
    .max(MAX_WEBHOOK_CHARS, `webhook must be at most ${MAX_WEBHOOK_CHARS.toLocaleString("en-US")} characters`)
    .superRefine((value, ctx) => {
      const problem = webhookProblem(value, options);
      if (problem) ctx.addIssue({ code: "custom", message: `webhook ${problem}` });
    });
}

const room = z
  .string({ message: `room must be a chat room's name: ${CHAT_ROOM_FORMAT}` })
  .trim()
  .regex(CHAT_ROOM, `room must be a chat room's name: ${CHAT_ROOM_FORMAT}`);

const question = z
  .string({ message: "question must be the question as text" })
  .trim()
  .min(1, "question is empty: give the question the schedule asks")
  .max(
    MAX_QUESTION_CHARS,
    `question must be at most ${MAX_QUESTION_CHARS.toLocaleString("en-US")} characters`,
  );

const sql = z
  .string({ message: "sql must be the SQL that answered the question, as text" })
  .trim()
  .min(1, "sql is empty: send the SQL that answered the question")
  .max(MAX_SQL_CHARS, `sql must be at most ${MAX_SQL_CHARS.toLocaleString("en-US")} characters`);

const name = z
  .string({ message: "name must be text" })
  .trim()
  .min(1, "name is empty: leave it out to use the question")
  .max(MAX_SCHEDULE_NAME_CHARS, `name must be at most ${MAX_SCHEDULE_NAME_CHARS} characters`);

/**
 * The schedule bodies. `PATCH` replaces what it names (a new `schedule` replaces the whole
 * schedule); `alert: null`, `webhook: null` and `room: null` remove them; `paused` pauses or resumes.
 */
export function scheduleBodies(options: ScheduleSchemaOptions = {}) {
  const create = z.strictObject({
    threadId: ThreadIdParam,
    question,
    sql,
    schedule: ScheduleSpec,
    alert: AlertConditionSpec.optional(),
    webhook: webhook(options).optional(),
    room: room.optional(),
    name: name.optional(),
  });
  const patch = z
    .strictObject({
      question: question.optional(),
      sql: sql.optional(),
      schedule: ScheduleSpec.optional(),
      alert: AlertConditionSpec.nullable().optional(),
      webhook: webhook(options).nullable().optional(),
      room: room.nullable().optional(),
      name: name.optional(),
      paused: z.boolean({ message: "paused must be true or false" }).optional(),
    })
    .refine((body) => Object.keys(body).length > 0, {
      message:
        "send at least one field to change (question, sql, schedule, alert, webhook, room, name or paused)",
    });
  return { create, patch };
}
