/**
 * The chart of an answer as a PNG, for chat apps that cannot run Vega: the page's own choice and
 * Vega-Lite spec (contract/chart), compiled by Vega-Lite, drawn by Vega to SVG (headless, no
 * DOM), and rasterised by resvg with the DejaVu Sans font shipped in `functions/assets/fonts` (its
 * licence beside it), so labels are drawn on a machine with no fonts. Vega, Vega-Lite and resvg
 * load on the first chart.
 */
import path from "node:path";
import {
  AXIS_FORMAT,
  FULL_FORMAT,
  chartSpec,
  chooseChart,
  formatAxis,
  formatNumber,
  parseStyleKey,
} from "../contract/chart";
import type { ColumnInfo, Row } from "../contract/events";

/** The chart's width in CSS pixels (the PNG is twice as wide, for sharp text on high-density screens). */
const CHART_WIDTH = 640;
const PNG_SCALE = 2;
const FONT = "DejaVu Sans";
/** The font file, from `lib/chat/` (built) or `src/chat/` (tests from source): `functions/assets/fonts`. */
const FONT_FILE = path.join(__dirname, "..", "..", "assets", "fonts", "DejaVuSans.ttf");
/** Numbers as the page formats them, in one locale (a chat has no browser to ask). */
const LOCALE = "en-US";

let registered: Promise<typeof import("vega")> | undefined;

/** Vega, with the page's number formats registered under the names the spec uses. */
function vega(): Promise<typeof import("vega")> {
  registered ??= import("vega").then((v) => {
    v.expressionFunction(AXIS_FORMAT, (value: unknown, key: string) =>
      typeof value === "number" ? formatAxis(value, parseStyleKey(key), LOCALE) : String(value),
    );
    v.expressionFunction(FULL_FORMAT, (value: unknown, key: string) =>
      formatNumber(value as number | null, parseStyleKey(key), LOCALE),
    );
    return v;
  });
  return registered;
}

/** A result's chart as an SVG document, or undefined when the page would draw none. */
export async function chartSvg(result: {
  columns: ColumnInfo[];
  rows: Row[];
  sql?: string;
}): Promise<string | undefined> {
  const choice = chooseChart(result.columns, result.rows, { sql: result.sql });
  const type = choice.options[0];
  if (!type) return undefined;
  const spec = chartSpec(choice, type);
  const sized = {
    ...spec,
    width: CHART_WIDTH,
    background: "white",
    config: { ...(spec.config as object), font: FONT },
  };
  const [v, { compile }] = await Promise.all([vega(), import("vega-lite")]);
  const view = new v.View(v.parse(compile(sized as never).spec), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** An SVG as a PNG, text drawn with the bundled font (`fontFiles: []` draws none: for tests). */
export async function svgToPng(svg: string, fontFiles: string[] = [FONT_FILE]): Promise<Buffer> {
  const { Resvg } = await import("@resvg/resvg-js");
  const image = new Resvg(svg, {
    font: { fontFiles, loadSystemFonts: false, defaultFontFamily: FONT, sansSerifFamily: FONT },
    fitTo: { mode: "zoom", value: PNG_SCALE },
    background: "white",
  });
  return image.render().asPng();
}

/** A result's chart as a PNG, or undefined when there is no chart for it. */
export async function chartPng(result: {
  columns: ColumnInfo[];
  rows: Row[];
  sql?: string;
}): Promise<Buffer | undefined> {
  const svg = await chartSvg(result);
  return svg ? svgToPng(svg) : undefined;
}
