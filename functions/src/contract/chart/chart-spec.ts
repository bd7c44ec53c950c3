/**
 * The Vega-Lite spec of a chart choice (chart.ts). Numbers on axes and in tooltips go through
 * custom format types the view registers with vega-embed (`quarryAxis`: compact "$1.2M", "12%";
 * `quarryFull`: "$506,464.61"), so Vega prints them in the browser's locale.
 */
import type { ChartChoice, ChartType } from "./chart";
import { styleKey, type NumberStyle } from "./numbers";

/**
 * A Vega-Lite (v6) top-level spec as JSON. Typed loosely here so the contract imports nothing; the
 * page hands it to vega-embed, the MCP result view to the same, and the tests compile it.
 */
export type VegaLiteSpec = { $schema: string } & Record<string, unknown>;

/** Custom Vega format types; the view registers functions under these names. */
export const AXIS_FORMAT = "quarryAxis";
export const FULL_FORMAT = "quarryFull";

/** Vega-Lite reads dots and brackets in field names as paths; escape them. */
export function fieldRef(name: string): string {
  return name.replace(/([.[\]\\])/g, "\\$1");
}

const numberAxis = (style: NumberStyle) => ({ format: styleKey(style), formatType: AXIS_FORMAT });

function xEncoding(choice: ChartChoice, type: ChartType) {
  const x = choice.x!;
  const base = { field: fieldRef(x.name), title: x.name };
  if (type === "scatter" || choice.xAxis === "quantitative") {
    return { ...base, type: "quantitative", axis: numberAxis({ kind: "number" }) };
  }
  if (choice.xAxis === "time" && choice.time?.native) {
    return { ...base, type: "temporal", ...(type === "bar" ? { timeUnit: "utcyearmonthdate" } : {}) };
  }
  // Months, quarters, weeks and years as written, and categories: in the chosen order, labels
  // thinned when they would overlap.
  return {
    ...base,
    type: "ordinal",
    sort: choice.xOrder,
    axis: { labelOverlap: "greedy", labelAngle: choice.xOrder.length > 12 ? -45 : 0, labelLimit: 140 },
  };
}

/** The fields a fold of several measures writes (names no result column can have: they start with a space). */
const MEASURE = " measure";
const VALUE = " value";

/**
 * What goes up the y axis and what colours the series: one number (coloured by a series column,
 * if any), or several measures folded into name/value pairs, their names in the legend.
 */
function series(choice: ChartChoice) {
  const measures = choice.measures?.map((m) => m.name);
  if (measures) {
    return {
      transform: [{ fold: measures, as: [MEASURE, VALUE] }],
      y: { field: VALUE, title: measures.join(", ") },
      color: { field: MEASURE, name: "", sort: measures },
    };
  }
  const c = choice.color;
  return {
    y: { field: fieldRef(choice.y!.name), title: choice.y!.name },
    color: c ? { field: fieldRef(c.name), name: c.name } : undefined,
  };
}

/** The Vega-Lite spec of a choice drawn as `type`, sized to its container. */
export function chartSpec(choice: ChartChoice, type: ChartType, title?: string): VegaLiteSpec {
  const x = choice.x!;
  const s = series(choice);
  const yFormat = numberAxis(choice.yStyle);
  const color = s.color
    ? {
        field: s.color.field,
        type: "nominal" as const,
        title: s.color.name || null,
        ...("sort" in s.color ? { sort: s.color.sort } : {}),
      }
    : undefined;
  const mark =
    type === "line"
      ? { type: "line" as const, point: choice.rows.length <= 60, tooltip: true }
      : type === "scatter"
        ? { type: "point" as const, filled: true, tooltip: true }
        : { type: "bar" as const, tooltip: true };
  const tooltip = [
    { field: fieldRef(x.name), title: x.name, type: xEncoding(choice, type).type },
    ...(color ? [{ field: color.field, title: color.title ?? "measure" }] : []),
    {
      field: s.y.field,
      title: choice.measures ? "value" : s.y.title,
      format: styleKey(choice.yStyle),
      formatType: FULL_FORMAT,
    },
  ];
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    ...(title ? { title } : {}),
    width: "container",
    height: 280,
    autosize: { type: "fit", contains: "padding" },
    // Vega-Lite ignores custom format types unless told they are registered.
    config: { customFormatTypes: true },
    data: { values: choice.rows },
    ...(s.transform ? { transform: s.transform } : {}),
    mark,
    encoding: {
      x: xEncoding(choice, type),
      y: { ...s.y, type: "quantitative", axis: yFormat },
      ...(color ? { color } : {}),
      // Grouped bars: one bar per series beside each other, not stacked.
      ...(color && type === "bar"
        ? { xOffset: { field: color.field, ...(color.sort ? { sort: color.sort } : {}) } }
        : {}),
      tooltip,
    },
  };
}
