/**
 * BigQuery API errors → categories the planner can act on. The client raises ApiError with the
 * HTTP code and BigQuery's `errors[].reason`; job failures carry the same reasons.
 */
import { QuarryError } from "../../errors";
import { WarehouseError, type WarehouseErrorCategory } from "../types";

interface ApiErrorLike {
  code?: number;
  message?: string;
  errors?: { reason?: string; message?: string; location?: string }[];
}

const QUOTA = new Set(["quotaExceeded", "rateLimitExceeded", "resourcesExceeded"]);
/** Reasons worth retrying with backoff: nothing was run, trying later may work. */
const RETRYABLE = new Set(["quotaExceeded", "rateLimitExceeded", "backendError", "internalError"]);

export function isRetryable(err: unknown): boolean {
  const e = err as ApiErrorLike;
  const reason = e?.errors?.[0]?.reason;
  return (reason !== undefined && RETRYABLE.has(reason)) || e?.code === 429 || (e?.code ?? 0) >= 500;
}

/**
 * `asPerson`: the call ran with the signed-in person's own credentials (user identity mode), so a
 * refusal is worded for them. A consent error (QuarryError) is not a warehouse error: it is thrown
 * as it is, to end the run.
 */
export function mapBigQueryError(err: unknown, opts: { asPerson?: boolean } = {}): WarehouseError {
  if (err instanceof QuarryError) throw err;
  if (err instanceof WarehouseError) return err;
  const e = (err ?? {}) as ApiErrorLike;
  const reason = e.errors?.[0]?.reason ?? "";
  const engineMessage = (e.errors?.[0]?.message || e.message || String(err)).trim();
  let category: WarehouseErrorCategory = "internal";
  let hint = "";
  const details: WarehouseError["details"] = { engineMessage };
  if (reason === "bytesBilledLimitExceeded") {
    category = "bytes_limit";
    const required = /(\d+) or higher required/.exec(engineMessage)?.[1];
    if (required) details.requiredBytes = Number(required);
    hint = " Filter on the partitioning column, select fewer columns, or aggregate a smaller range.";
  } else if (reason === "invalidQuery" || reason === "invalid") {
    category = "invalid_query";
    const at = /at \[(\d+):(\d+)\]/.exec(engineMessage);
    if (at) details.position = { line: Number(at[1]), column: Number(at[2]) };
  } else if (reason === "notFound" || e.code === 404) {
    category = "not_found";
    hint = " Use list_tables and describe_table to find the right names.";
  } else if (reason === "accessDenied" || (e.code === 403 && !QUOTA.has(reason))) {
    category = "access_denied";
    hint = opts.asPerson
      ? " Quarry runs your queries with your own Google account, and BigQuery refused it this: ask the data's " +
        "owner or a BigQuery admin for access (reading the table, and running jobs in the project), or ask " +
        "about the tables list_tables shows."
      : " Query only the tables list_tables shows.";
  } else if (QUOTA.has(reason) || e.code === 429) {
    category = "quota";
    hint = " BigQuery is busy or a quota is used up; try again later or ask for less data.";
  } else if (reason === "stopped" || reason === "timeout" || /timed out|cancel/i.test(engineMessage)) {
    category = "timeout";
  }
  // BigQuery's messages end without a full stop ("… was not found in location EU"): one before the hint.
  const sentence = hint && !/[.!?]$/.test(engineMessage) ? `${engineMessage}.` : engineMessage;
  return new WarehouseError(category, `BigQuery: ${sentence}${hint}`, details, { cause: err });
}

/**
 * BigQuery's own answer for a table that does not exist (what a scope refusal says too):
 * `Not found: Table project:dataset.table was not found in location …`, mapped like the real one.
 */
export function bigQueryNotFound(
  ref: { dataset: string; table: string; datasetSeen: boolean },
  project: string,
  location: string | undefined,
): WarehouseError {
  const dataset = ref.dataset.includes(".") ? ref.dataset.replace(".", ":") : `${project}:${ref.dataset}`;
  const where = location ? ` in location ${location}` : "";
  const message = ref.datasetSeen
    ? `Not found: Table ${dataset}.${ref.table} was not found${where}`
    : `Not found: Dataset ${dataset} was not found${where}`;
  return mapBigQueryError({ code: 404, message, errors: [{ reason: "notFound", message }] });
}
