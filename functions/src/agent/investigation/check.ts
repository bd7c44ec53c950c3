/**
 * The report checker: deterministic, no model. It refuses a draft report whose text types a number
 * that is not a cited cell, cites a step, row or column that does not exist (or has no result),
 * rests a finding on no step, claims a cause without a contribution, drivers or breakdown step behind it,
 * or cites segment changes that do not add up to the total they are parts of.
 */
import { DRIVER_KINDS, type InvestigationPlan, type StepOutcome } from "../../contract/investigations";
import { citationsIn, formatCell, lookup, numeric, type Citation } from "./cells";

/** The writer's draft (its tool call's arguments, validated for shape elsewhere). */
export interface DraftReport {
  title: string;
  summary: string;
  sections: { heading: string; text: string; steps: number[] }[];
}

/** Words that claim a cause. */
const CAUSAL =
  /\b(because|due to|driven by|drove|drives|caused by|causes?d?|owing to|as a result of|led to|leads to|explained by|resulted in|thanks to|attributable to)\b/i;

const NUMBER = /(?<![A-Za-z_\d.])-?\d[\d,]*(?:\.\d+)?%?(?![A-Za-z_\d])/g;
const STEP_REF = /\bsteps?\s+\d+(?:\s*(?:,|and|&)\s*\d+)*/gi;

/** Every reason to refuse the draft; empty when it may be shown. */
export function checkReport(draft: DraftReport, plan: InvestigationPlan, outcomes: StepOutcome[]): string[] {
  const errors: string[] = [];
  const periodNumbers = new Set(
    plan.steps.flatMap((s) => JSON.stringify(s).match(/\d+/g) ?? []).map((n) => Number(n)),
  );
  const texts: { where: string; text: string; steps: number[]; finding: boolean }[] = [
    { where: "the title", text: draft.title, steps: [], finding: false },
    { where: "the summary", text: draft.summary, steps: [], finding: false },
    ...draft.sections.map((s, i) => ({
      where: `section ${i + 1} ("${s.heading.slice(0, 60)}")`,
      text: `${s.heading}\n${s.text}`,
      steps: s.steps,
      finding: true,
    })),
  ];
  if (!draft.sections.length) errors.push("The report has no sections: give each finding its own section.");
  for (const t of texts) errors.push(...checkText(t, plan, outcomes, periodNumbers));
  errors.push(...checkParts(draft, plan, outcomes));
  return errors;
}

function checkText(
  t: { where: string; text: string; steps: number[]; finding: boolean },
  plan: InvestigationPlan,
  outcomes: StepOutcome[],
  periodNumbers: Set<number>,
): string[] {
  const errors: string[] = [];
  const { citations, malformed } = citationsIn(t.text);
  for (const m of malformed)
    errors.push(
      `${t.where}: "${m}" is not a citation; write {{s<step>.r<row>.<column>}}, e.g. {{s1.r1.change}}`,
    );
  const allowed = new Set(periodNumbers);
  for (const c of citations) {
    const cell = lookup(outcomes, c);
    if (!cell.ok) errors.push(`${t.where}: ${cell.error}`);
    else for (const n of numbersOfCell(c, cell.value)) allowed.add(n);
  }
  for (const o of outcomes) for (const n of textCellNumbers(o)) allowed.add(n);
  const bare = t.text.replace(/\{\{[^}]*\}\}/g, " ").replace(STEP_REF, " ");
  for (const typed of bare.match(NUMBER) ?? []) {
    const n = Number(typed.replace(/[,%]/g, ""));
    if (!allowed.has(n) && !allowed.has(Math.abs(n))) {
      errors.push(
        `${t.where}: the number "${typed}" is typed, not cited from a result; ` +
          "replace it with the cell it comes from, {{s<step>.r<row>.<column>}}",
      );
    }
  }
  const rests = new Set([...t.steps, ...citations.map((c) => c.step)]);
  for (const id of t.steps) {
    const o = outcomes.find((x) => x.id === id);
    if (!o) errors.push(`${t.where} rests on step ${id}, which is not in the plan`);
    else if (o.status !== "done")
      errors.push(`${t.where} rests on step ${id}, which has no result (${o.status})`);
  }
  if (t.finding && rests.size === 0)
    errors.push(`${t.where} rests on no step: list the steps it uses and cite their cells`);
  const causal = CAUSAL.exec(t.text)?.[0];
  if (causal && !hasDriver(rests, plan, outcomes)) {
    errors.push(
      `${t.where} claims a cause ("${causal}") without a contribution, drivers or breakdown step behind it: ` +
        "cite such a step's cells, or state the change without a cause",
    );
  }
  return errors;
}

function hasDriver(ids: Set<number>, plan: InvestigationPlan, outcomes: StepOutcome[]): boolean {
  return [...ids].some((id) => {
    const step = plan.steps.find((s) => s.id === id);
    const done = outcomes.find((o) => o.id === id)?.status === "done";
    return !!step && done && DRIVER_KINDS.includes(step.kind);
  });
}

/** The numbers a cited cell stands for: its value, as formatted, and as a percentage. */
function numbersOfCell(c: Citation, value: unknown): number[] {
  const n = numeric(value);
  if (n === undefined) return (String(value).match(/\d+(\.\d+)?/g) ?? []).map(Number);
  const shown = Number(formatCell(c.column, value).replace(/[,%]/g, ""));
  return [n, Math.abs(n), shown, Math.abs(shown), Math.round(n * 100) / 100];
}

/** Numbers inside text cells (a segment named "store 12", a period "2025-03-01"): not figures. */
function textCellNumbers(o: StepOutcome): number[] {
  if (!o.rows) return [];
  return o.rows.flatMap((r) =>
    Object.values(r).flatMap((v) =>
      typeof v === "string" && numeric(v) === undefined ? (v.match(/\d+/g) ?? []).map(Number) : [],
    ),
  );
}

/**
 * A contribution's segments are parts of the total change: when the report cites them and a
 * comparison over the same periods gives the total, their changes must add up to it.
 */
function checkParts(draft: DraftReport, plan: InvestigationPlan, outcomes: StepOutcome[]): string[] {
  const cited = new Set(
    [draft.summary, ...draft.sections.map((s) => s.text)].flatMap((t) =>
      citationsIn(t).citations.map((c) => c.step),
    ),
  );
  const errors: string[] = [];
  for (const step of plan.steps) {
    if (step.kind !== "contribution" || !cited.has(step.id)) continue;
    const parts = outcomes.find((o) => o.id === step.id);
    const total = plan.steps.find(
      (s) =>
        s.kind === "compare" &&
        JSON.stringify([s.base, s.current]) === JSON.stringify([step.base, step.current]),
    );
    const whole = total && outcomes.find((o) => o.id === total.id);
    if (!parts?.rows || parts.truncated || !whole?.rows?.[0]) continue;
    const sum = parts.rows.reduce((acc, r) => acc + (numeric(r.change) ?? 0), 0);
    const expected = numeric(whole.rows[0].change) ?? 0;
    if (Math.abs(sum - expected) > 0.005 + Math.abs(expected) * 1e-9) {
      errors.push(
        `The segments of step ${step.id} add up to a change of ${formatCell("change", sum)}, not the total ` +
          `${formatCell("change", expected)} of step ${total!.id}: do not report them as parts of that total`,
      );
    }
  }
  return errors;
}
