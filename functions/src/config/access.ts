/** Who may use Quarry and what each person may spend (`functions/src/access/`). */
import { ConfigError, docsOf, int, list, text, type Env } from "./define";

export interface AccessConfig {
  /** Domains whose verified addresses are members (QUARRY_ALLOWED_DOMAINS), lower case. */
  allowedDomains: string[];
  /** Emails that are admins from the start (QUARRY_ADMINS), lower case. */
  admins: string[];
  /** Whom a refused person should ask: an email or a URL (QUARRY_ACCESS_CONTACT). */
  contact?: string;
  /** QUARRY_ACCESS_POLICY=local-open inside the emulator: every account of the Auth emulator may use it. */
  localOpen: boolean;
  /** Why a setting cannot be used (local-open outside the emulator): refused, with these words. */
  problem?: string;
  /** Members and roles are cached this long per instance (QUARRY_ACCESS_CACHE_SECONDS, at most 60). */
  cacheMs: number;
  /** Default quotas (QUARRY_QUOTA_*), per person; an admin can override them per member. */
  quotas: { questionsPerMinute: number; bytesPerDay: number; tokensPerDay: number };
  /** The questions quota's sliding window (QUARRY_QUOTA_WINDOW_SECONDS, 60: "per minute"; tests lengthen it). */
  questionWindowMs: number;
  /** Audit entries are kept this long (QUARRY_AUDIT_TTL_DAYS; a Firestore TTL policy on `expireAt`). */
  auditTtlDays: number;
}

const concern = "access";

const ACCESS_SETTINGS = {
  allowedDomains: list("QUARRY_ALLOWED_DOMAINS", {
    concern,
    description:
      "Domains whose **verified** addresses are members. With neither this nor `QUARRY_ADMINS`, nobody is served (`access:not_configured`).",
  }),
  admins: list("QUARRY_ADMINS", { concern, description: "Emails that are admins from the start." }),
  contact: text("QUARRY_ACCESS_CONTACT", {
    concern,
    defaultText: "(none)",
    description: "Whom a refused person should ask (an email or URL), shown in the refusal.",
  }),
  policy: text("QUARRY_ACCESS_POLICY", {
    concern,
    defaultText: "unset (`local-open` under `npm start`)",
    description: "`local-open`: every Auth-emulator account may use Quarry; honoured only in the emulator.",
  }),
  cacheSeconds: int("QUARRY_ACCESS_CACHE_SECONDS", {
    concern,
    default: 30,
    max: 60,
    boundsWhy: "a removed member must lose access within a minute",
    description: "How long an instance caches a member's entry.",
  }),
  questionsPerMinute: int("QUARRY_QUOTA_QUESTIONS_PER_MINUTE", {
    concern,
    default: 10,
    description: "Default questions per person per window (an admin overrides quotas per member).",
  }),
  bytesPerDay: int("QUARRY_QUOTA_BYTES_PER_DAY", {
    concern,
    default: 100_000_000_000,
    description: "Default bytes billed per person per day.",
  }),
  tokensPerDay: int("QUARRY_QUOTA_TOKENS_PER_DAY", {
    concern,
    default: 2_000_000,
    description: "Default model tokens per person per day.",
  }),
  windowSeconds: int("QUARRY_QUOTA_WINDOW_SECONDS", {
    concern,
    default: 60,
    description: "The questions quota's sliding window (tests lengthen it to count deterministically).",
  }),
  auditTtlDays: int("QUARRY_AUDIT_TTL_DAYS", {
    concern,
    default: 400,
    description: "Audit entries expire after this many days (`expireAt`, TTL policy).",
  }),
} as const;

/** The access settings from an environment; a policy that cannot work is refused with its reason. */
export function readAccessConfig(env: Env): AccessConfig {
  const s = ACCESS_SETTINGS;
  const inEmulator = env.FUNCTIONS_EMULATOR === "true";
  const policy = s.policy.read(env);
  if (policy && policy !== "local-open") {
    throw new ConfigError(
      `QUARRY_ACCESS_POLICY can only be "local-open" (the emulator stack's), got "${policy}".`,
    );
  }
  return {
    allowedDomains: s.allowedDomains.read(env).map((d) => d.toLowerCase().replace(/^@/, "")),
    admins: s.admins.read(env).map((e) => e.toLowerCase()),
    contact: s.contact.read(env),
    localOpen: policy === "local-open" && inEmulator,
    ...(policy === "local-open" && !inEmulator
      ? {
          problem:
            "QUARRY_ACCESS_POLICY=local-open only works in the local emulator stack; a deployed Quarry needs " +
            "QUARRY_ALLOWED_DOMAINS and/or QUARRY_ADMINS instead.",
        }
      : {}),
    cacheMs: s.cacheSeconds.read(env) * 1000,
    quotas: {
      questionsPerMinute: s.questionsPerMinute.read(env),
      bytesPerDay: s.bytesPerDay.read(env),
      tokensPerDay: s.tokensPerDay.read(env),
    },
    questionWindowMs: s.windowSeconds.read(env) * 1000,
    auditTtlDays: s.auditTtlDays.read(env),
  };
}

export const ACCESS_DOCS = docsOf(ACCESS_SETTINGS);
