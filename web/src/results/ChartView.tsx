/**
 * A result as a Vega-Lite chart, chosen from what the columns mean (the contract's chart.ts) and switchable;
 * numbers on its axes in the browser's locale; downloadable as PNG or SVG through Vega's own view
 * export. vega-embed is loaded on first use, so the page itself stays small.
 *
 * The hosted page's Content-Security-Policy allows no `'unsafe-eval'` and no inline styles
 * (docs/deploy.md#security-headers), so the chart is drawn without either: Vega's expressions run
 * in vega-interpreter (`ast: true`) instead of being compiled with `Function`, and neither
 * vega-embed nor its tooltip injects a `<style>` element (their few rules are in styles.css).
 */
import { useEffect, useId, useMemo, useRef, useState, type RefObject } from "react";
import type { TopLevelSpec } from "vega-lite";
import type { View } from "vega";
import {
  AXIS_FORMAT,
  FULL_FORMAT,
  browserLocale,
  chartSpec,
  chooseChart,
  formatAxis,
  formatNumber,
  parseStyleKey,
  type ChartType,
  type ColumnInfo,
  type Row,
} from "@quarry/functions/contract";
import { fileName } from "../data/csv";
import { saveUrl } from "./download";

interface Props {
  columns: ColumnInfo[];
  rows: Row[];
  /** The SQL that produced the rows: its ORDER BY keeps the category order. */
  sql?: string;
  preferred: "auto" | ChartType;
  /** The query's name on the page ("Query 1"). */
  label: string;
  /** Words for the downloaded files' names (the question). */
  fileHint: string;
}

const NAMES: Record<ChartType, string> = { bar: "Bar", line: "Line", scatter: "Scatter" };

/** Vega's custom format types: compact axis labels and full tooltip numbers, in the browser's locale. */
function formatFunctions() {
  const locale = browserLocale();
  return {
    [AXIS_FORMAT]: (value: unknown, key: string) =>
      typeof value === "number" ? formatAxis(value, parseStyleKey(key), locale) : String(value),
    [FULL_FORMAT]: (value: unknown, key: string) =>
      formatNumber(value as number | null, parseStyleKey(key), locale),
  };
}

/** Draws a spec into `host` with vega-embed; the Vega view (for export) once drawn, and any error. */
function useVegaView(host: RefObject<HTMLDivElement | null>, spec: TopLevelSpec | null) {
  const [view, setView] = useState<View | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!spec || !host.current) return;
    const el = host.current;
    let finalize: (() => void) | undefined;
    let cancelled = false;
    const dark = document.documentElement.dataset.theme === "dark";
    Promise.all([import("vega-embed"), import("vega-interpreter")])
      .then(([{ default: embed }, { expressionInterpreter }]) =>
        embed(el, spec, {
          actions: false,
          renderer: "svg",
          ast: true,
          expr: expressionInterpreter,
          defaultStyle: false,
          tooltip: { disableDefaultStyle: true },
          expressionFunctions: formatFunctions(),
          ...(dark ? { theme: "dark" as const } : {}),
        }),
      )
      .then((res) => {
        if (cancelled) return res.finalize();
        finalize = () => res.finalize();
        setView(res.view);
        setError(null);
      })
      .catch((e: unknown) => setError(`The chart could not be drawn: ${(e as Error).message}`));
    return () => {
      cancelled = true;
      setView(null);
      finalize?.();
    };
  }, [host, spec]);
  return { view, error, setError };
}

export function ChartView({ columns, rows, sql, preferred, label, fileHint }: Props) {
  const id = useId();
  const choice = useMemo(() => chooseChart(columns, rows, { sql }), [columns, rows, sql]);
  const options = choice.options;
  const [picked, setPicked] = useState<ChartType | null>(null);
  const type = picked ?? (preferred !== "auto" && options.includes(preferred) ? preferred : options[0]);
  const spec = useMemo(
    () => (type ? (chartSpec(choice, type) as unknown as TopLevelSpec) : null),
    [choice, type],
  );
  const host = useRef<HTMLDivElement>(null);
  const { view, error, setError } = useVegaView(host, spec);

  if (!type) {
    return <p className="muted small chart-none">No chart for this result: {choice.reason}</p>;
  }
  const save = (format: "png" | "svg") => {
    // Vega's own export: the same drawing at twice the pixels for PNG, vector for SVG.
    view
      ?.toImageURL(format, format === "png" ? 2 : 1)
      .then((url) => saveUrl(url, fileName(fileHint, format)))
      .catch((e: unknown) => setError(`The chart could not be exported: ${(e as Error).message}`));
  };
  const drawn = choice.measures ? choice.measures.map((m) => m.name).join(" and ") : choice.y!.name;
  const desc = `${NAMES[type]} chart of ${drawn} by ${choice.x!.name}${choice.color ? `, coloured by ${choice.color.name}` : ""}`;
  return (
    <div className="chart">
      <div className="chart-bar">
        <fieldset className="chart-types">
          <legend className="sr-only">Chart type</legend>
          {options.map((t) => (
            <label key={t} className={t === type ? "chip selected" : "chip"}>
              <input
                type="radio"
                name={`chart-${id}`}
                value={t}
                checked={t === type}
                onChange={() => setPicked(t)}
              />
              {NAMES[t]}
            </label>
          ))}
        </fieldset>
        <span className="chart-export">
          {(["png", "svg"] as const).map((f) => (
            <button
              key={f}
              type="button"
              disabled={!view}
              onClick={() => save(f)}
              aria-label={`Download the ${label} chart as ${f.toUpperCase()}`}
            >
              {f.toUpperCase()}
            </button>
          ))}
        </span>
      </div>
      <div
        ref={host}
        className="chart-host"
        role="img"
        aria-label={desc}
        data-chart-type={type}
        data-x-axis={choice.xAxis}
      />
      {choice.reason && <p className="muted small chart-note">{choice.reason}</p>}
      {error && (
        <p role="alert" className="error small">
          {error}
        </p>
      )}
    </div>
  );
}
