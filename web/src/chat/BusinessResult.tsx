/**
 * Business view's result: the key figures (a one-row answer's values, formatted like a report) or
 * the chart of the last query that returned rows, with every query's SQL and rows behind Details.
 */
import type { ReactNode } from "react";
import { browserLocale, cellText, columnStyles, formatNumber } from "@quarry/functions/contract";
import { ChartView } from "../results/ChartView";
import type { QueryView } from "../results/query-view";
import type { Settings } from "../settings/useSettings";

interface Props {
  queries: QueryView[];
  question: string;
  settings: Settings;
  /** The analyst's cards (SQL, costs, table, chart, CSV), opened with Details. */
  children: ReactNode;
}

/** A one-row result's values as labelled figures. */
function KeyFigures({ query }: { query: QueryView }) {
  const r = query.result!;
  const styles = columnStyles(r.columns, r.rows);
  const locale = browserLocale();
  const row = r.rows[0];
  return (
    <dl className="key-figures" aria-label="Key figures">
      {r.columns.slice(0, 6).map((c) => (
        <div key={c.name}>
          <dt>{c.name.replaceAll("_", " ")}</dt>
          <dd>
            {styles[c.name] && row[c.name] !== undefined
              ? formatNumber(row[c.name], styles[c.name], locale)
              : cellText(row[c.name])}
          </dd>
        </div>
      ))}
    </dl>
  );
}

export function BusinessResult({ queries, question, settings, children }: Props) {
  const last = [...queries].reverse().find((q) => q.result && q.result.rows.length > 0);
  return (
    <>
      {last &&
        (last.result!.rows.length === 1 ? (
          <KeyFigures query={last} />
        ) : (
          <ChartView
            columns={last.result!.columns}
            rows={last.result!.rows}
            sql={last.sql}
            preferred={settings.chartType}
            label="Result"
            fileHint={question}
          />
        ))}
      {queries.length > 0 && (
        <details className="business-details">
          <summary>Details: the SQL and the rows</summary>
          {children}
        </details>
      )}
    </>
  );
}
