/** One query of a turn: its SQL (copyable), costs, and its result as table, chart and CSV. */
import { useState } from "react";
import type { QueryView } from "./query-view";
import { csvFileName, toCsv } from "../data/csv";
import { formatBytes, formatCount } from "../data/format";
import type { Settings } from "../settings/useSettings";
import { ChartView } from "./ChartView";
import { DataTable } from "./DataTable";
import { saveCsv } from "./download";

interface Props {
  query: QueryView;
  index: number;
  question: string;
  settings: Settings;
  onPageSizeChange(size: number): void;
}

/** Bytes BigQuery did not report (row-level security hides them): unknown, not 0. */
const UNKNOWN = "unknown (row-level security)";

/** The query's SQL, with a button that copies it. */
function SqlBlock({ sql }: { sql: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(sql);
    setCopied(true);
    setTimeout(() => setCopied(false), 2000);
  };
  return (
    <div className="sql">
      <pre tabIndex={0} aria-label="SQL">
        <code>{sql}</code>
      </pre>
      <button type="button" className="copy" onClick={() => void copy().catch(() => setCopied(false))}>
        {copied ? "Copied" : "Copy SQL"}
      </button>
    </div>
  );
}

/** What the query was estimated to scan, was billed and processed, and how long it took. */
function Costs({ query }: { query: QueryView }) {
  const r = query.result;
  return (
    <p className="costs small">
      {query.estimatedBytes !== undefined && (
        <span>Estimated: {query.estimateHidden ? UNKNOWN : formatBytes(query.estimatedBytes)}</span>
      )}
      {r && <span>Billed: {formatBytes(r.bytesBilled)}</span>}
      {r && <span>Processed: {r.bytesHidden ? UNKNOWN : formatBytes(r.bytesProcessed)}</span>}
      {r && (
        <span>
          {r.cacheHit ? "From cache" : r.durationMs !== undefined ? `${formatCount(r.durationMs)} ms` : ""}
        </span>
      )}
    </p>
  );
}

export function QueryCard({ query, index, question, settings, onPageSizeChange }: Props) {
  const r = query.result;
  const label = `Query ${index + 1}${query.attempt && query.attempt > 1 ? ` (attempt ${query.attempt})` : ""}`;

  return (
    <section className={`query status-${query.status}`} aria-label={label} data-query-id={query.id}>
      <header className="query-head">
        <h3>{label}</h3>
        <span className="badge" data-status={query.status}>
          {query.status === "running" ? "running…" : query.status === "failed" ? "failed" : "done"}
        </span>
      </header>
      {query.sql && <SqlBlock sql={query.sql} />}
      <Costs query={query} />
      {query.error && (
        <p className="error" role="note">
          <strong>{query.error.category.replace(/_/g, " ")}:</strong> {query.error.message}
        </p>
      )}
      {r && (
        <>
          <div className="result-bar">
            <span className="small muted">
              {r.totalRowsAtLeast ? "more than " : ""}
              {formatCount(r.totalRows)} row{r.totalRows === 1 && !r.totalRowsAtLeast ? "" : "s"}
              {r.truncated ? ` (showing the first ${formatCount(r.rows.length)})` : ""}
            </span>
            <button
              type="button"
              onClick={() => saveCsv(csvFileName(question), toCsv(r.columns, r.rows))}
              aria-label={`Download ${label} as CSV`}
            >
              Download CSV
            </button>
          </div>
          <DataTable
            columns={r.columns}
            rows={r.rows}
            caption={`${label} result`}
            pageSize={settings.pageSize}
            onPageSizeChange={onPageSizeChange}
          />
          <ChartView
            columns={r.columns}
            rows={r.rows}
            sql={query.sql}
            preferred={settings.chartType}
            label={label}
            fileHint={question}
          />
        </>
      )}
    </section>
  );
}
