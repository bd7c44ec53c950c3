/**
 * An investigation's report as a PDF (`GET /threads/:id/investigation?format=pdf`), drawn with
 * pdfkit: the title and summary, each finding with the first rows of the steps it rests on, and
 * what was not done. The text is the stored report's (every figure a cited cell), set in DejaVu
 * Sans (shipped in `functions/assets/fonts`, with its licence) so any character the report holds is
 * drawn.
 */
import path from "node:path";
import type { InvestigationReport, StepResult } from "../contract/investigations";
import { formatCell } from "../agent/investigation/cells";

const FONT_FILE = path.join(__dirname, "..", "..", "assets", "fonts", "DejaVuSans.ttf");
/** Rows of a step's result the PDF lists under a finding. */
const PDF_ROWS = 10;

/** A step's first rows as lines, formatted as the report's figures are: "region: south · change: -350.00". */
function rowLines(result: StepResult): string[] {
  const rows = result.rows.slice(0, PDF_ROWS);
  const lines = rows.map((r) =>
    result.columns.map((c) => `${c.name}: ${formatCell(c.name, r[c.name])}`).join(" · "),
  );
  const more = result.rows.length > rows.length || result.truncated;
  return more ? [...lines, `(first ${rows.length} rows)`] : lines;
}

/** The report as PDF bytes. */
export async function investigationPdf(report: InvestigationReport, results: StepResult[]): Promise<Buffer> {
  const { default: PDFDocument } = await import("pdfkit");
  const doc = new PDFDocument({ size: "A4", margin: 56, info: { Title: report.title, Creator: "Quarry" } });
  const chunks: Buffer[] = [];
  doc.on("data", (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
  });
  doc.registerFont("body", FONT_FILE).font("body");
  doc.fontSize(18).text(report.title).moveDown(0.5);
  doc.fontSize(11).text(report.summary).moveDown();
  for (const section of report.sections) {
    doc.fontSize(14).text(section.heading).moveDown(0.3);
    doc.fontSize(11).text(section.text).moveDown(0.3);
    for (const id of section.steps) {
      const result = results.find((r) => r.id === id);
      if (!result) continue;
      doc.fontSize(9).fillColor("#444").text(`Step ${id}`);
      for (const line of rowLines(result)) doc.text(line);
      doc.fillColor("black").moveDown(0.5);
    }
    doc.moveDown(0.5);
  }
  if (report.notDone.length) {
    doc.fontSize(14).text("Not done").moveDown(0.3);
    doc.fontSize(11);
    for (const step of report.notDone) doc.text(`Step ${step.id}, ${step.title}: ${step.reason}`);
  }
  doc.end();
  return done;
}
