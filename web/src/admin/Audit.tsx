/**
 * The audit log: every query and admin action, newest first, filtered by person (email or uid) and
 * dates, fifty at a time with "Older entries" following the API's cursor.
 */
import { useCallback, useEffect, useState, type FormEvent } from "react";
import { formatBytes } from "../data/format";
import type { AuditEntry, AuditFilter } from "@quarry/functions/contract";
import type { AdminApi } from "./api";
import { useAction } from "./useLoad";

/** A date input's day as the API's bounds: from its start, until the start of the next day. */
function bounds(person: string, since: string, until: string): AuditFilter {
  const next = until ? new Date(Date.parse(`${until}T00:00:00Z`) + 86_400_000).toISOString() : "";
  return {
    ...(person.trim() ? { person: person.trim() } : {}),
    ...(since ? { since: `${since}T00:00:00Z` } : {}),
    ...(next ? { until: next } : {}),
  };
}

function useAuditPages(api: AdminApi) {
  const [filter, setFilter] = useState<AuditFilter>({});
  const [entries, setEntries] = useState<AuditEntry[]>([]);
  const [next, setNext] = useState<string>();
  const [error, busy, run] = useAction();
  const fetchPage = useCallback(
    (f: AuditFilter, cursor?: string) =>
      run(async () => {
        const page = await api.audit(f, cursor);
        setEntries((old) => (cursor ? [...old, ...page.entries] : page.entries));
        setNext(page.next);
      }),
    [api, run],
  );
  useEffect(() => {
    void fetchPage(filter);
  }, [fetchPage, filter]);
  const older = () => void fetchPage(filter, next);
  return { entries, next, error, busy, setFilter, older };
}

export function AuditSection({ api }: { api: AdminApi }) {
  const { entries, next, error, busy, setFilter, older } = useAuditPages(api);
  const [person, setPerson] = useState("");
  const [since, setSince] = useState("");
  const [until, setUntil] = useState("");
  const apply = (e: FormEvent) => {
    e.preventDefault();
    setFilter(bounds(person, since, until));
  };
  return (
    <section id="audit" className="admin-section" aria-labelledby="audit-title">
      <h3 id="audit-title">Audit log</h3>
      <form className="admin-form" onSubmit={apply} aria-label="Filter the audit log">
        <label htmlFor="audit-person">Person (email or uid)</label>
        <input id="audit-person" value={person} onChange={(e) => setPerson(e.target.value)} />
        <label htmlFor="audit-since">Since</label>
        <input id="audit-since" type="date" value={since} onChange={(e) => setSince(e.target.value)} />
        <label htmlFor="audit-until">Until</label>
        <input id="audit-until" type="date" value={until} onChange={(e) => setUntil(e.target.value)} />
        <button type="submit" disabled={busy}>
          Show entries
        </button>
      </form>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {entries.length === 0 && !busy && <p className="muted">No entries.</p>}
      <ol className="audit-list" aria-label="Audit entries">
        {entries.map((e, i) => (
          <AuditRow key={`${e.at}-${i}`} entry={e} />
        ))}
      </ol>
      {next && (
        <button type="button" onClick={older} disabled={busy}>
          Older entries
        </button>
      )}
    </section>
  );
}

/** One audit entry: an admin action, a shared conversation's link made, revoked, opened or continued, an upload, or a query with its outcome, cost and — when it failed or was refused — why. */
export function AuditRow({ entry }: { entry: AuditEntry }) {
  const who = entry.email ?? entry.uid;
  const when = new Date(entry.at).toLocaleString();
  if (entry.kind === "admin") {
    return (
      <li className="audit admin-action">
        <time dateTime={entry.at}>{when}</time> <strong>{who}</strong> {entry.action} {entry.target}
      </li>
    );
  }
  if (entry.kind === "share") {
    return (
      <li className="audit share">
        <time dateTime={entry.at}>{when}</time> <strong>{who}</strong> {entry.action}
        {entry.outcome === "refused" && <span className="error"> refused (data outside their scope)</span>} ·
        conversation <code>{entry.threadId}</code>
      </li>
    );
  }
  if (entry.kind === "upload") {
    return (
      <li className="audit upload">
        <time dateTime={entry.at}>{when}</time> <strong>{who}</strong> upload {entry.outcome} · {entry.file} →{" "}
        <code>{entry.table}</code> · {entry.rows.toLocaleString()} rows · {formatBytes(entry.bytes)}
        {entry.error && <span className="error"> · {entry.error.message}</span>}
      </li>
    );
  }
  return (
    <li className="audit query">
      <time dateTime={entry.at}>{when}</time> <strong>{who}</strong> query {entry.outcome} ·{" "}
      {formatBytes(entry.bytesBilled)} · {entry.durationMs} ms
      {entry.error && (
        <span className="error">
          {" "}
          · <strong>{entry.error.category.replace(/_/g, " ")}</strong>: {entry.error.message}
        </span>
      )}
      <pre>
        <code>{entry.sql}</code>
      </pre>
    </li>
  );
}
