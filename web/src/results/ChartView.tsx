/**
 * A result as a Vega-Lite chart, type chosen from the columns and switchable. vega-embed is loaded
 * on first use, so the page itself stays small.
 */
import { useEffect, useMemo, useRef, useState } from "react";
import type { ColumnInfo, Row } from "../data/columns";
import { availableCharts, chartSpec, planChart, type ChartType } from "../data/chart";

interface Props {
  columns: ColumnInfo[];
  rows: Row[];
  preferred: "auto" | ChartType;
  label: string;
}

const NAMES: Record<ChartType, string> = { bar: "Bar", line: "Line", scatter: "Scatter" };

export function ChartView({ columns, rows, preferred, label }: Props) {
  const options = useMemo(() => availableCharts(columns, rows), [columns, rows]);
  const [picked, setPicked] = useState<ChartType | null>(null);
  const type = picked ?? (preferred !== "auto" && options.includes(preferred) ? preferred : options[0]);
  const plan = useMemo(() => (type ? planChart(type, columns, rows) : null), [type, columns, rows]);
  const host = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (!plan || !host.current) return;
    const el = host.current;
    let finalize: (() => void) | undefined;
    let cancelled = false;
    const dark = document.documentElement.dataset.theme === "dark";
    import("vega-embed")
      .then(({ default: embed }) =>
        embed(el, chartSpec(plan, rows), {
          actions: false,
          renderer: "svg",
          ...(dark ? { theme: "dark" as const } : {}),
        }),
      )
      .then((res) => {
        if (cancelled) res.finalize();
        else finalize = () => res.finalize();
        setError(null);
      })
      .catch((e: unknown) => setError(`The chart could not be drawn: ${(e as Error).message}`));
    return () => {
      cancelled = true;
      finalize?.();
    };
  }, [plan, rows]);

  if (!options.length || !plan) {
    return <p className="muted small">No chart for this result: it needs a number and at least two rows.</p>;
  }
  const desc = `${NAMES[plan.type]} chart of ${plan.y.name} by ${plan.x.name}${plan.color ? `, coloured by ${plan.color.name}` : ""}`;
  return (
    <div className="chart">
      <fieldset className="chart-types">
        <legend className="sr-only">Chart type</legend>
        {options.map((t) => (
          <label key={t} className={t === plan.type ? "chip selected" : "chip"}>
            <input
              type="radio"
              name={`chart-${label}`}
              value={t}
              checked={t === plan.type}
              onChange={() => setPicked(t)}
            />
            {NAMES[t]}
          </label>
        ))}
      </fieldset>
      <div ref={host} className="chart-host" role="img" aria-label={desc} data-chart-type={plan.type} />
      {error && (
        <p role="alert" className="error small">
          {error}
        </p>
      )}
    </div>
  );
}
