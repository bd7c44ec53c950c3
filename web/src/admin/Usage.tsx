/** Usage per person: questions, bytes billed and model tokens, today and over the last 30 days. */
import { useCallback } from "react";
import { formatBytes, formatCount } from "../data/format";
import type { UsageAnswer, UsageTotals as Totals } from "@quarry/functions/contract";
import type { AdminApi } from "./api";
import { useLoad } from "./useLoad";

const DAYS = 30;

export function UsageSection({ api }: { api: AdminApi }) {
  const load = useCallback(() => api.usage(DAYS), [api]);
  const { data, error, loading, reload } = useLoad(load);
  return (
    <section id="usage" className="admin-section" aria-labelledby="usage-title">
      <div className="section-head">
        <h3 id="usage-title">Usage</h3>
        <button type="button" onClick={() => void reload()} disabled={loading}>
          Refresh usage
        </button>
      </div>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {data && data.people.length === 0 && <p className="muted">Nobody has asked anything yet.</p>}
      {data && data.people.length > 0 && <UsageTable usage={data} />}
    </section>
  );
}

function UsageTable({ usage }: { usage: UsageAnswer }) {
  return (
    <div className="table-wrap">
      <table aria-label="Usage per person">
        <thead>
          <tr>
            <th scope="col">Person</th>
            <th scope="col">Questions today</th>
            <th scope="col">Bytes today</th>
            <th scope="col">Tokens today</th>
            <th scope="col">Questions, {usage.days} days</th>
            <th scope="col">Bytes, {usage.days} days</th>
            <th scope="col">Tokens, {usage.days} days</th>
          </tr>
        </thead>
        <tbody>
          {usage.people.map((p) => (
            <tr key={p.uid}>
              <th scope="row" title={p.uid}>
                {p.email ?? p.uid}
              </th>
              <Cells totals={p.today} />
              <Cells totals={p.period} />
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Cells({ totals }: { totals: Totals }) {
  return (
    <>
      <td>{formatCount(totals.questions)}</td>
      <td>{formatBytes(totals.bytes)}</td>
      <td>{formatCount(totals.tokens)}</td>
    </>
  );
}
