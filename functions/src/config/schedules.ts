/** Scheduled questions and their alerts (functions/src/schedules, docs/schedules.md). */
import { docsOf, flag, int, readAll, text, type Env } from "./define";

/** The schedule settings (part of `RuntimeConfig`). */
export interface SchedulesConfig {
  /** Schedules one person may have. */
  maxPerPerson: number;
  /** How often the tick looks for due schedules, in minutes (the `scheduleTick` function's cadence). */
  tickMinutes: number;
  /** The Trigger Email extension's collection; unset: no mail. */
  mailCollection: string | undefined;
  /** The page's address, for links in webhook messages and mail; unset: `https://<project>.web.app`. */
  appUrl: string | undefined;
  /** Accept `http://127.0.0.1` webhooks (loopback test receivers); honoured only against the emulators. */
  loopbackWebhook: boolean;
}

const concern = "schedules";

const SCHEDULE_SETTINGS = {
  maxPerPerson: int("QUARRY_MAX_SCHEDULES", {
    concern,
    default: 20,
    min: 0,
    max: 1_000,
    description:
      "Most schedules (saved questions that run on their own) one person may have; 0 turns creating them off.",
  }),
  tickMinutes: int("QUARRY_SCHEDULE_TICK_MINUTES", {
    concern,
    default: 5,
    min: 1,
    max: 60,
    description:
      "How often the `scheduleTick` function looks for due schedules, in minutes: a schedule runs at most this late. Read when the functions are deployed (Cloud Scheduler's job).",
  }),
  mailCollection: text("QUARRY_MAIL_COLLECTION", {
    concern,
    defaultText: "unset (no mail)",
    description:
      'The Firestore collection of the Firebase "Trigger Email" extension (usually `mail`): a fired alert or a failed scheduled run adds a `{to, message: {subject, text}}` document to it.',
  }),
  appUrl: text("QUARRY_APP_URL", {
    concern,
    defaultText: "`https://<project>.web.app`",
    description: "The page's address, for the thread links in webhook messages and mail.",
  }),
  loopbackWebhook: flag("QUARRY_SCHEDULE_LOOPBACK_WEBHOOK", {
    concern,
    scope: "tooling",
    default: false,
    description:
      "Accept `http://127.0.0.1:<port>` webhooks, for tests with a loopback receiver. Honoured only against the Firestore emulator.",
  }),
} as const;

/** The schedule settings from an environment; the loopback webhook only with a Firestore emulator. */
export function readSchedulesConfig(env: Env): SchedulesConfig {
  const read = readAll(SCHEDULE_SETTINGS, env);
  return { ...read, loopbackWebhook: read.loopbackWebhook && !!env.FIRESTORE_EMULATOR_HOST };
}

/** The tick's cadence as `onSchedule` takes it, read when the function entry loads (deploy). */
export function scheduleTickCadence(env: Env): string {
  const minutes = SCHEDULE_SETTINGS.tickMinutes.read(env);
  return `every ${minutes} minutes`;
}

export const SCHEDULES_DOCS = docsOf(SCHEDULE_SETTINGS);
