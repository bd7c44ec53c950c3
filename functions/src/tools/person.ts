/**
 * The person a run runs for, as the server puts it in the run's `configurable.quarry_person` — the
 * one typed way from the run's configuration to every tool and context function. Nothing here is
 * a secret: credentials never travel in a run's configuration (they would reach checkpoints and
 * logs); the warehouse looks them up by `uid` when a run is in user identity mode.
 */
import { FULL_SCOPE, limitedScope, type Scope } from "./scope";
import type { UploadRef } from "./uploads/types";

/** The channels besides the page a question can come through. */
const VIA_CHANNELS = ["mcp", "slack", "google_chat"] as const;

/**
 * Which way a request came in when it was not the page: an MCP client (with the personal access
 * token it used: its id, never the secret), or a chat app. Audit and usage entries carry it.
 */
export interface Via {
  channel: (typeof VIA_CHANNELS)[number];
  /** The personal access token's id, when the call came with one. */
  tokenId?: string;
  /** The OAuth client's id (a client ID metadata document's URL, or a registered id), with an OAuth token. */
  clientId?: string;
}

/** The configurable key the server sets for every run. */
export const PERSON_KEY = "quarry_person";

export interface RunPerson {
  uid: string;
  /** For the audit log and job labels; null when the account has none. */
  email: string | null;
  /** Bytes the person may still bill today at the run's start; unset = no person budget. */
  bytesLeft?: number;
  /** What the person may see (`access/scope.ts`). */
  scope: Scope;
  /** The run was asked for through MCP (absent: the page or the API). */
  via?: Via;
  /** The conversation's uploaded tables at the run's start (in scope for this run only). */
  uploads?: UploadRef[];
  /** A schedule's run: its id (the audit log marks its query) and its saved SQL, run without planning. */
  schedule?: ScheduledTurn;
}

/** What a scheduled run carries: the schedule and the SQL its owner saved. */
export interface ScheduledTurn {
  id: string;
  sql: string;
}

/**
 * The run's person from its configuration, or undefined when the run carries none. A scope that
 * came through JSON (a background run's task) is rebuilt; one that does not parse is empty — it
 * fails closed.
 */
export function runPersonOf(configurable: unknown): RunPerson | undefined {
  const raw = (configurable as Record<string, unknown> | undefined)?.[PERSON_KEY] as
    Partial<RunPerson> | undefined;
  if (!raw || typeof raw !== "object" || typeof raw.uid !== "string") return undefined;
  return {
    uid: raw.uid,
    email: typeof raw.email === "string" ? raw.email : null,
    ...(typeof raw.bytesLeft === "number" ? { bytesLeft: raw.bytesLeft } : {}),
    scope: scopeOf(raw.scope),
    ...(Array.isArray(raw.uploads) && raw.uploads.length ? { uploads: uploadsOf(raw.uploads) } : {}),
    ...(typeof raw.schedule?.id === "string" && typeof raw.schedule.sql === "string"
      ? { schedule: { id: raw.schedule.id, sql: raw.schedule.sql } }
      : {}),
    ...(raw.via && VIA_CHANNELS.includes(raw.via.channel)
      ? {
          via: {
            channel: raw.via.channel,
            ...(typeof raw.via.tokenId === "string" ? { tokenId: raw.via.tokenId } : {}),
            ...(typeof raw.via.clientId === "string" ? { clientId: raw.via.clientId } : {}),
          },
        }
      : {}),
  };
}

/** Uploads that came through JSON: only well-formed entries are kept (a malformed one sees nothing). */
function uploadsOf(raw: unknown[]): UploadRef[] {
  return raw.filter(
    (u): u is UploadRef =>
      typeof u === "object" &&
      u !== null &&
      ["name", "file", "table", "location"].every(
        (k) => typeof (u as Record<string, unknown>)[k] === "string",
      ) &&
      Array.isArray((u as UploadRef).columns),
  );
}

function scopeOf(raw: unknown): Scope {
  const s = raw as Partial<Scope> | undefined;
  if (s?.all === true) return FULL_SCOPE;
  return limitedScope(Array.isArray(s?.entries) ? s.entries.filter((e) => typeof e === "string") : []);
}
