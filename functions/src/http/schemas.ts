/**
 * Request schemas (zod), shaped like the LangGraph Agent Server's, strict: an unknown field is an
 * error that names it, so a typo never silently changes behaviour.
 */
import { z } from "zod";
import { ASSISTANT_ID, RUN_STATUSES, THREAD_STATUSES } from "../contract/protocol";
import { ThreadIdParam, checkpointRef, metadata } from "../runs/schemas";
import { MAX_TOKEN_DAYS, MAX_TOKEN_NAME_CHARS } from "../contract/tokens";

export const CreateThreadBody = z.strictObject({
  thread_id: ThreadIdParam.optional(),
  metadata: metadata.optional(),
  if_exists: z.enum(["raise", "do_nothing"]).optional(),
  graph_id: z.literal(ASSISTANT_ID).optional(),
  supersteps: z.undefined({ message: "supersteps are not supported" }).optional(),
  ttl: z.undefined({ message: "thread ttl is not supported" }).optional(),
});

export const PatchThreadBody = z.strictObject({
  metadata: metadata,
});

export const SearchThreadsBody = z.strictObject({
  metadata: metadata.optional(),
  status: z.enum(THREAD_STATUSES).optional(),
  limit: z.number().int().min(1).max(100).optional(),
  offset: z.number().int().min(0).max(10_000).optional(),
  sort_by: z.enum(["thread_id", "status", "created_at", "updated_at"]).optional(),
  sort_order: z.enum(["asc", "desc"]).optional(),
  select: z.array(z.string()).optional(),
  values: z.undefined({ message: "searching by values is not supported" }).optional(),
  ids: z.array(ThreadIdParam).max(100).optional(),
});

export const HistoryBody = z.strictObject({
  limit: z.number().int().min(1).max(1000).optional(),
  before: z.union([z.string(), checkpointRef]).optional(),
  metadata: metadata.optional(),
  checkpoint: checkpointRef.optional(),
});

/** `POST /me/tokens`: a name to know the token by, and how long it lives (at most MAX_TOKEN_DAYS). */
export const CreateTokenBody = z.strictObject({
  name: z
    .string()
    .trim()
    .min(1, "name the token (where it is used: 'laptop IDE')")
    .max(MAX_TOKEN_NAME_CHARS, `keep the name under ${MAX_TOKEN_NAME_CHARS} characters`),
  expires_in_days: z
    .number({ message: "expires_in_days must be a number of days" })
    .int("expires_in_days must be a whole number of days")
    .min(1, "expires_in_days must be at least 1")
    .max(
      MAX_TOKEN_DAYS,
      `a token lives at most ${MAX_TOKEN_DAYS} days: set expires_in_days to ${MAX_TOKEN_DAYS} or less`,
    ),
});

export const TokenIdParam = z
  .string()
  .regex(/^[0-9a-f]{16}$/, "must be a token id as GET /me/tokens lists it");

/** An OAuth grant's id as `GET /me/oauth-clients` lists it (oidc-provider's ids are URL-safe). */
export const GrantIdParam = z
  .string()
  .regex(/^[A-Za-z0-9_-]{8,128}$/, "must be a client's id as GET /me/oauth-clients lists it");

export const ListRunsQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).default(10),
  offset: z.coerce.number().int().min(0).default(0),
  status: z.enum(RUN_STATUSES).optional(),
  select: z.unknown().optional(),
});

export const CancelQuery = z.strictObject({
  wait: z.enum(["true", "false", "0", "1"]).optional(),
  action: z.enum(["interrupt", "rollback"]).optional(),
  /** SDK ≥ 1.13 may send why a run is cancelled (`taken:…`); recorded nowhere, accepted. */
  reason: z.string().max(200).optional(),
});
