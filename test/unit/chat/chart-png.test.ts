import { describe, expect, it } from "vitest";
import { chartPng, chartSvg, svgToPng } from "../../../functions/src/chat/chart-png";
import { darkPixels, readPng } from "../../support/png";

const result = {
  columns: [
    { name: "channel", type: "STRING" },
    { name: "orders", type: "INT64" },
  ],
  rows: [
    { channel: "web", orders: 120 },
    { channel: "store", orders: 80 },
    { channel: "phone", orders: 15 },
  ],
  sql: "SELECT channel, COUNT(*) AS orders FROM shop.orders GROUP BY channel ORDER BY orders DESC",
};

describe("the chart as a PNG", () => {
  it("draws the page's chart: a PNG of the expected size with its labels drawn in the bundled font", async () => {
    const svg = (await chartSvg(result))!;
    expect(svg).toContain("<svg");
    // The labels are in the SVG as text: the categories and the axis titles.
    for (const label of ["web", "store", "phone", "channel", "orders"]) expect(svg).toContain(`>${label}<`);
    const png = readPng((await chartPng(result))!);
    expect(png.width).toBe(1280); // 640 CSS pixels at twice the density
    expect(png.height).toBeGreaterThan(500);
    expect(png.height).toBeLessThan(800);
    // Without a font the bars are drawn but not the labels: the difference is the text.
    const withoutText = readPng(await svgToPng(svg, []));
    expect(withoutText.width).toBe(png.width);
    const textPixels = darkPixels(png) - darkPixels(withoutText);
    expect(textPixels).toBeGreaterThan(2000);
  }, 30_000);

  it("no chart when the page would draw none", async () => {
    const one = { columns: [{ name: "orders", type: "INT64" }], rows: [{ orders: 3 }] };
    expect(await chartPng(one)).toBeUndefined();
  });
});
