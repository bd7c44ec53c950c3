/**
 * An investigation's plan: validated with zod, refused with errors that say what to fix (the
 * planner gets them once to try again; a person's edit gets them as the answer to their edit).
 */
import { z } from "zod";
import type { InvestigationPlan, PlanStep } from "../../contract/investigations";

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
const TABLE = /^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*){1,2}$/;

const isoDate = z
  .string()
  .regex(ISO_DATE, "must be a date as YYYY-MM-DD")
  .refine((d) => !Number.isNaN(Date.parse(`${d}T00:00:00Z`)), "is not a real date");

const period = z
  .strictObject({ from: isoDate, to: isoDate })
  .refine((p) => p.from < p.to, "`from` must be before `to` (`to` is exclusive)");

/** A piece of SQL the planner writes inside Quarry's statement: one expression, nothing else. */
const fragment = (what: string) =>
  z
    .string()
    .trim()
    .min(1, `${what} is empty`)
    .max(500, `${what} must be at most 500 characters`)
    .refine((s) => !/;|--|\/\*/.test(s), `${what} must be one SQL expression: no ';' and no comments`);

const ident = z.string().regex(IDENT, "must be a column name (letters, digits, _)");
const dimensions = z
  .array(ident)
  .min(1, "name at least one dimension")
  .max(2, "at most 2 dimensions per step");

const grain = z.enum(["day", "week", "month"], { message: "grain must be day, week or month" });

const base = { id: z.number().int().min(1).max(99), title: z.string().trim().min(1).max(200) };

const step = z.discriminatedUnion(
  "kind",
  [
    z.strictObject({ ...base, kind: z.literal("compare"), base: period, current: period }),
    z.strictObject({ ...base, kind: z.literal("breakdown"), period, dimensions }),
    z.strictObject({ ...base, kind: z.literal("contribution"), base: period, current: period, dimensions }),
    z.strictObject({
      ...base,
      kind: z.literal("drivers"),
      base: period,
      current: period,
      dimensions: z
        .array(ident)
        .min(1, "name at least one dimension")
        .max(4, "at most 4 dimensions for a drivers step"),
    }),
    z.strictObject({ ...base, kind: z.literal("trend"), range: period, grain }),
    z.strictObject({
      ...base,
      kind: z.literal("forecast"),
      range: period,
      grain,
      horizon: z.number().int().min(1, "forecast at least 1 period").max(24, "forecast at most 24 periods"),
    }),
  ],
  { message: "kind must be one of compare, breakdown, contribution, drivers, trend, forecast" },
);

function planSchema(maxSteps: number) {
  return z.strictObject({
    question: z.string().trim().min(1, "restate the question").max(500),
    hypotheses: z.array(z.string().trim().min(1).max(300)).min(1, "state at least one hypothesis").max(6),
    metric: z.strictObject({
      name: z.string().trim().min(1).max(80),
      expression: fragment("metric.expression"),
      table: z.string().regex(TABLE, "must be dataset.table"),
      dateColumn: ident,
      filter: fragment("metric.filter").optional(),
    }),
    steps: z
      .array(step)
      .min(1, "plan at least one step")
      .max(maxSteps, `at most ${maxSteps} steps (QUARRY_INVESTIGATION_MAX_STEPS)`)
      .refine((s) => new Set(s.map((x) => x.id)).size === s.length, "step ids must be unique"),
  }) satisfies z.ZodType<InvestigationPlan>;
}

export type PlanCheck = { ok: true; plan: InvestigationPlan } | { ok: false; errors: string[] };

/** Validates a plan; every problem as `path: message`. */
export function checkPlan(raw: unknown, maxSteps: number): PlanCheck {
  const parsed = planSchema(maxSteps).safeParse(raw);
  if (!parsed.success) {
    return {
      ok: false,
      errors: parsed.error.issues.map((i) => {
        const where = i.path.length ? i.path.join(".") : "plan";
        if (i.code === "unrecognized_keys") return `${where}: unknown field(s) ${i.keys.join(", ")}`;
        return `${where}: ${i.message}`;
      }),
    };
  }
  const plan = parsed.data as InvestigationPlan;
  const aggregate = /\b(sum|count|avg|min|max|approx_count_distinct|count_if)\s*\(/i;
  if (!aggregate.test(plan.metric.expression)) {
    return {
      ok: false,
      errors: ["metric.expression: must be an aggregate such as SUM(revenue) or COUNT(*)"],
    };
  }
  if (plan.steps.some((st) => st.kind === "drivers") && summable(plan.metric.expression) === undefined) {
    return {
      ok: false,
      errors: [
        "steps: a drivers step needs a summable metric — metric.expression must be SUM(<column or expression>) " +
          "or COUNT(*); use a contribution step for other aggregates",
      ],
    };
  }
  return { ok: true, plan };
}

/**
 * The per-row value a summable metric adds up (`SUM(x)` → `x`, `COUNT(*)` → `1`), for a drivers
 * step, whose segments are sums of rows; undefined for any other aggregate.
 */
export function summable(expression: string): string | undefined {
  const e = expression.trim();
  if (/^count\s*\(\s*\*\s*\)$/i.test(e)) return "1";
  const m = /^sum\s*\(([\s\S]*)\)$/i.exec(e);
  if (!m) return undefined;
  // The argument must be the whole call's: its parentheses balance and never close early.
  let depth = 0;
  for (const ch of m[1]) {
    depth += ch === "(" ? 1 : ch === ")" ? -1 : 0;
    if (depth < 0) return undefined;
  }
  return depth === 0 && !/^\s*distinct\b/i.test(m[1]) ? m[1].trim() : undefined;
}

/**
 * The person's answer to the plan (`command.resume`): empty or "run" runs it as is; "drop 2, 4"
 * drops those steps; a JSON object `{ "drop": [2] }` or `{ "plan": { … } }` (an edited plan,
 * validated like the planner's); "cancel" runs nothing.
 */
export type PlanDecision =
  | { action: "run"; plan: InvestigationPlan; edited: string[] }
  | { action: "cancel" }
  | { action: "refused"; errors: string[] };

export function decide(plan: InvestigationPlan, answer: string, maxSteps: number): PlanDecision {
  const text = answer.trim();
  if (!text || /^(run|yes|ok|go|run it|run as is)\.?$/i.test(text))
    return { action: "run", plan, edited: [] };
  if (/^(cancel|stop|no)\.?$/i.test(text)) return { action: "cancel" };
  const drop = /^drop\s+(?:steps?\s+)?([\d,\s]+|and)+$/i.exec(text);
  if (drop) return dropSteps(plan, (text.match(/\d+/g) ?? []).map(Number));
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return {
      action: "refused",
      errors: [
        `"${text.slice(0, 80)}" is not an answer to the plan: answer "run", "drop 2, 3", "cancel", ` +
          'or JSON {"drop": [2]} / {"plan": {…}} with the edited plan.',
      ],
    };
  }
  const obj = (json ?? {}) as { drop?: unknown; plan?: unknown };
  if (Array.isArray(obj.drop)) return dropSteps(plan, obj.drop.map(Number));
  if (obj.plan !== undefined) {
    const checked = checkPlan(obj.plan, maxSteps);
    if (!checked.ok) return { action: "refused", errors: checked.errors };
    return { action: "run", plan: checked.plan, edited: ["the plan was edited"] };
  }
  return { action: "refused", errors: ['Send {"drop": [ids]} or {"plan": {…}}.'] };
}

function dropSteps(plan: InvestigationPlan, ids: number[]): PlanDecision {
  const unknown = ids.filter((id) => !plan.steps.some((s) => s.id === id));
  if (unknown.length) {
    const have = plan.steps.map((s) => s.id).join(", ");
    return { action: "refused", errors: [`No step ${unknown.join(", ")} in the plan (its steps: ${have}).`] };
  }
  const steps: PlanStep[] = plan.steps.filter((s) => !ids.includes(s.id));
  if (!steps.length) return { action: "refused", errors: ["That drops every step: keep at least one."] };
  return { action: "run", plan: { ...plan, steps }, edited: [`dropped step ${ids.join(", ")}`] };
}
