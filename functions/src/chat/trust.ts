/**
 * How an answer was computed, as a chat message says it (pure): Verified (and by what) or Written
 * for this question, with the tables read and the planner's caveats — the trust facts the page
 * shows (contract `ComputedFacts`).
 */
import type { ComputedFacts } from "../contract/events";

/** How the answer was computed, in one line: verified (and by what) or written for this question. */
export function trustLine(computed: ComputedFacts): string {
  const v = computed.verification;
  const how =
    v.status === "verified"
      ? `✅ *Verified*: ${v.by === "verified_query" ? "the team's verified query" : "approved definitions"} (${v.names.join(", ")})`
      : "✍️ *Written for this question*: the data team has not checked this SQL";
  const tables = computed.tables.length ? ` · tables: ${computed.tables.join(", ")}` : "";
  const caveats = computed.caveats.length ? ` · ${computed.caveats.join("; ")}` : "";
  return `${how}${tables}${caveats}`.slice(0, 2900);
}
