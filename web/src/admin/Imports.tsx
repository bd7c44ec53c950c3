/**
 * Imported definitions: the team's dbt or LookML projects pushed through the API (a CI step after
 * `dbt build`, docs/semantic-layer.md). Each shows what is in use and, when a push waits for
 * review, its changes against it — a renamed column, a metric whose SQL changed or no longer runs,
 * a join gone — which an admin applies whole or item by item, or dismisses. Applied changes reach
 * the agent within seconds.
 */
import { useCallback, useState } from "react";
import type { ContextImportView, ImportChangeView } from "@quarry/functions/contract";
import type { AdminApi } from "./api";
import { useAction, useLoad } from "./useLoad";

export function ImportsSection({ api }: { api: AdminApi }) {
  const load = useCallback(() => api.contextImports(), [api]);
  const { data, error, loading, reload } = useLoad(load);
  return (
    <section id="imports" className="admin-section" aria-labelledby="imports-title">
      <div className="section-head">
        <h3 id="imports-title">Imported definitions</h3>
        <button type="button" onClick={() => void reload()} disabled={loading}>
          Refresh imports
        </button>
      </div>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {data && data.imports.length === 0 && (
        <p className="muted">
          No dbt or LookML project imported through the API. A CI step pushes one after <code>dbt build</code>
          .
        </p>
      )}
      <ul className="proposal-list" aria-label="Imports">
        {data?.imports.map((i) => (
          <ImportCard
            key={`${i.id}:${i.pending?.checksum ?? ""}:${i.pending?.changes.length ?? 0}`}
            api={api}
            item={i}
            onDone={reload}
          />
        ))}
      </ul>
    </section>
  );
}

function counts(s: {
  tables: number;
  columns: number;
  joins: number;
  metrics: number;
  metricsWithSql: number;
}) {
  return `${s.tables} tables, ${s.columns} columns, ${s.joins} joins, ${s.metrics} metrics (${s.metricsWithSql} with SQL)`;
}

interface CardProps {
  api: AdminApi;
  item: ContextImportView;
  onDone: () => Promise<void>;
}

function ImportCard({ api, item, onDone }: CardProps) {
  const [error, busy, run] = useAction();
  const act = async (fn: () => Promise<unknown>) => {
    if (await run(fn)) await onDone();
  };
  const title = `${item.source} project ${item.project}`;
  return (
    <li className="proposal import" aria-label={`Import: ${title}`}>
      <p>
        <strong>{title}</strong>
      </p>
      {item.active ? (
        <p className="small">
          In use: {counts(item.active)}, applied {new Date(item.active.appliedAt).toLocaleString()} by{" "}
          {item.active.appliedBy}.
        </p>
      ) : (
        <p className="small muted">Nothing of it in use yet.</p>
      )}
      {item.pending && (
        <Review api={api} item={item} pending={item.pending} title={title} busy={busy} act={act} />
      )}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </li>
  );
}

interface ReviewProps {
  api: AdminApi;
  item: ContextImportView;
  pending: NonNullable<ContextImportView["pending"]>;
  title: string;
  busy: boolean;
  act: (fn: () => Promise<unknown>) => Promise<void>;
}

/** The push waiting for review: its changes, each ticked to apply, its notes, and what to do with it. */
function Review({ api, item, pending, title, busy, act }: ReviewProps) {
  const changes = pending.changes;
  const [picked, setPicked] = useState<Set<string>>(() => new Set(changes.map((c) => c.id)));
  const toggle = (id: string) =>
    setPicked((p) => {
      const next = new Set(p);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  const checksum = pending.checksum;
  return (
    <>
      <p className="small">
        Waiting for review: pushed {new Date(pending.pushedAt).toLocaleString()} by {pending.pushedBy} (
        {counts(pending)}).
      </p>
      {changes.length === 0 ? (
        <p className="small muted">It changes nothing against what is in use.</p>
      ) : (
        <fieldset className="import-changes">
          <legend>Changes ({changes.length})</legend>
          <ul aria-label={`Changes of ${title}`}>
            {changes.map((c) => (
              <ChangeRow key={c.id} change={c} checked={picked.has(c.id)} onToggle={() => toggle(c.id)} />
            ))}
          </ul>
        </fieldset>
      )}
      {pending.notices.length > 0 && (
        <details>
          <summary>Notes from the import ({pending.notices.length})</summary>
          <ul className="small">
            {pending.notices.map((n, i) => (
              <li key={i}>
                <code>{n.item}</code>: {n.message}
              </li>
            ))}
          </ul>
        </details>
      )}
      <div className="proposal-actions">
        <button
          type="button"
          className="primary"
          disabled={busy}
          onClick={() => void act(() => api.applyImport(item.id, { checksum }))}
        >
          Apply all
        </button>
        {changes.length > 0 && (
          <button
            type="button"
            disabled={busy || picked.size === 0 || picked.size === changes.length}
            onClick={() => void act(() => api.applyImport(item.id, { checksum, changes: [...picked] }))}
          >
            Apply selected ({picked.size})
          </button>
        )}
        <button
          type="button"
          className="danger"
          disabled={busy}
          onClick={() => void act(() => api.dismissImport(item.id))}
        >
          Dismiss
        </button>
      </div>
    </>
  );
}

/** A change's kind in a few words, with what it touches and its detail (new SQL, the reason). */
function ChangeRow({
  change,
  checked,
  onToggle,
}: {
  change: ImportChangeView;
  checked: boolean;
  onToggle: () => void;
}) {
  const id = `change-${change.id.replace(/[^\w-]/g, "_")}`;
  return (
    <li className={`import-change ${change.kind.replace(/\s+/g, "-")}`}>
      <input id={id} type="checkbox" checked={checked} onChange={onToggle} />
      <label htmlFor={id}>
        {change.kind}: <code>{change.item}</code>
      </label>
      {change.detail && <pre className="small">{change.detail}</pre>}
    </li>
  );
}
