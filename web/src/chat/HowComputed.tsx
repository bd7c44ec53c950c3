/**
 * "How this was computed", for a person who does not read SQL: whether the data team stands
 * behind the answer (Verified, naming the verified query or approved definitions; otherwise
 * "Written for this question" with "Ask the data team to verify"), then the definitions used, the
 * tables, filters, period and caveats. Drawn from the structured facts the server checked against
 * the SQL (`computed` event / `response_metadata.quarry_computed`), never from the answer's prose.
 */
import { useState } from "react";
import type { ComputedFacts } from "@quarry/functions/contract";
import { DefinitionsUsed } from "./DefinitionsUsed";

interface Props {
  computed: ComputedFacts;
  /** Files the answer for the data team's review; absent where it cannot be asked (a shared view). */
  onVerify?: () => Promise<unknown>;
}

function Verification({ computed, onVerify }: Props) {
  const v = computed.verification;
  const [asked, setAsked] = useState<"no" | "sending" | "sent" | string>("no");
  if (v.status === "verified") {
    return (
      <p className="verification verified">
        <strong className="badge verified">Verified</strong>{" "}
        {v.by === "verified_query"
          ? `The data team's verified query: ${v.names.join("; ")}.`
          : `Built only from the data team's approved definitions: ${v.names.join(", ")}.`}
      </p>
    );
  }
  const ask = async () => {
    setAsked("sending");
    try {
      await onVerify!();
      setAsked("sent");
    } catch (e) {
      setAsked(e instanceof Error ? e.message : String(e));
    }
  };
  return (
    <p className="verification written">
      <strong className="badge written">Written for this question</strong> The data team has not verified this
      query.{" "}
      {onVerify &&
        (asked === "sent" ? (
          <span role="status">Sent to the data team for review.</span>
        ) : (
          <button type="button" className="link" disabled={asked === "sending"} onClick={() => void ask()}>
            Ask the data team to verify
          </button>
        ))}
      {asked !== "no" && asked !== "sending" && asked !== "sent" && (
        <span className="error" role="alert">
          {" "}
          {asked}
        </span>
      )}
    </p>
  );
}

export function HowComputed({ computed, onVerify }: Props) {
  const { tables, filters, timeRange, grain, caveats } = computed;
  return (
    <section className="how-computed" aria-label="How this was computed">
      <h3>How this was computed</h3>
      <Verification computed={computed} onVerify={onVerify} />
      <ul className="facts">
        {tables.length > 0 && (
          <li>
            <span className="muted">From</span> {tables.join(", ")}
          </li>
        )}
        {filters.map((f) => (
          <li key={f.column}>
            <span className="muted">Only</span> {f.column}: {f.values.join(", ")}
          </li>
        ))}
        {(timeRange || grain) && (
          <li>
            <span className="muted">Period</span>{" "}
            {timeRange ? `${timeRange.from ?? "the start"} to ${timeRange.to ?? "now"}` : "all time"}
            {grain ? `, by ${grain}` : ""}
          </li>
        )}
        {caveats.map((c) => (
          <li key={c}>
            <span className="muted">Note</span> {c}
          </li>
        ))}
      </ul>
      {computed.definitions.length > 0 && <DefinitionsUsed definitions={computed.definitions} />}
    </section>
  );
}
