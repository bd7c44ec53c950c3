/**
 * Investigations on the real graph (MemorySaver), a scripted model and the real DuckDB tools over
 * the planted-cause table `retail.sales`: the plan is shown as an interrupt, edited, run under the
 * parallel cap and the budgets, and reported with every figure filled in from a cited cell.
 */
import fs from "node:fs";
import { Command } from "@langchain/langgraph";
import { HumanMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { afterAll, describe, expect, it } from "vitest";
import type {
  InvestigationReport,
  PlanReview,
  StepOutcome,
} from "../../../functions/src/contract/investigations";
import { CITATION, formatCell } from "../../../functions/src/agent/investigation/cells";
import { closeWarehouses, createWarehouseTools, getWarehouse } from "../../../functions/src/tools";
import { stepSql } from "../../../functions/src/agent/investigation/sql";
import { FULL_SCOPE, limitedScope, type Scope } from "../../../functions/src/tools/scope";
import { personConfig } from "../../support/person";
import {
  PLANTED,
  PLANTED_PLAN,
  RETAIL_FILES,
  RETAIL_SALES_CSV,
  investigationScript,
} from "../../support/investigation-script";
import { smartScript } from "../../support/scripted-model-script";
import { duckTools, harness, testConfig, type Harness } from "./harness";

afterAll(() => closeWarehouses());

const ENV = { QUARRY_DUCKDB_FILES: RETAIL_FILES };
const QUESTION = "Why did revenue fall in March 2025?";

function cfg(thread: string, scope?: Scope) {
  return {
    configurable: {
      thread_id: thread,
      user_id: "user-1",
      run_id: `run-${thread}`,
      ...personConfig("user-1", scope),
    },
    streamMode: ["values", "custom"] as ("values" | "custom")[],
  };
}

async function collect(stream: AsyncIterable<unknown>) {
  const custom: Record<string, unknown>[] = [];
  const values: Record<string, unknown>[] = [];
  for await (const [mode, chunk] of stream as AsyncIterable<[string, Record<string, unknown>]>) {
    (mode === "custom" ? custom : values).push(chunk);
  }
  return { custom, values };
}

async function ask(h: Harness, thread: string, variant = "good", scope?: Scope) {
  const message = new HumanMessage(`${QUESTION} [investigation:${variant}]`);
  return collect(await h.graph.stream({ messages: [message], investigate: true }, cfg(thread, scope)));
}

async function answer(h: Harness, thread: string, resume: string, scope?: Scope) {
  return collect(await h.graph.stream(new Command({ resume }), cfg(thread, scope)));
}

async function stateOf(h: Harness, thread: string) {
  const s = await h.graph.getState({ configurable: { thread_id: thread } });
  const inv = s.values.investigation as { outcomes: StepOutcome[]; report?: InvestigationReport } | null;
  return { state: s, outcomes: inv?.outcomes ?? [], report: inv?.report };
}

/** Revenue per month straight from the fixture file (not through Quarry). */
function monthTotals(): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const line of fs.readFileSync(RETAIL_SALES_CSV, "utf8").trim().split("\n").slice(1)) {
    const [date, , , , revenue] = line.split(",");
    totals[date.slice(0, 7)] = (totals[date.slice(0, 7)] ?? 0) + Number(revenue);
  }
  return totals;
}

/** The bq_query tool with each call held until the test lets it go; counts calls in flight. */
function heldQueries(tools: StructuredToolInterface[]) {
  const real = tools.find((t) => t.name === "bq_query")!;
  const gate = { inFlight: 0, maxInFlight: 0, arrived: 0, waiters: [] as (() => void)[] };
  const releases: (() => void)[] = [];
  let onArrive: () => void = () => {};
  const arrivedAt = (n: number) =>
    new Promise<void>((resolve) => {
      const check = () => (gate.arrived >= n ? resolve() : (onArrive = check));
      check();
    });
  const held = {
    name: "bq_query",
    invoke: async (input: unknown, config: unknown) => {
      gate.arrived++;
      gate.inFlight++;
      gate.maxInFlight = Math.max(gate.maxInFlight, gate.inFlight);
      await new Promise<void>((resolve) => {
        releases.push(resolve);
        onArrive();
      });
      try {
        return await real.invoke(input as never, config as never);
      } finally {
        gate.inFlight--;
      }
    },
  } as unknown as StructuredToolInterface;
  return {
    tools: tools.map((t) => (t === real ? held : t)),
    gate,
    arrivedAt,
    releaseAll: () => releases.splice(0).forEach((r) => r()),
    releaseOne: () => releases.shift()?.(),
  };
}

describe("an investigation on the planted cause", () => {
  it("shows the plan first, runs the edited plan, finds the planted segment and fills every figure from its cell", async () => {
    const h = await harness(investigationScript(smartScript()), { env: ENV });
    const first = await ask(h, "inv-main");
    const review = (first.values.at(-1)?.__interrupt__ as { value: PlanReview }[])[0].value;
    expect(review.kind).toBe("investigation_plan");
    expect(review.plan.steps.map((s) => s.kind)).toEqual(["compare", "contribution", "breakdown", "trend"]);
    expect(review.budget.maxSteps).toBe(8);
    expect(first.custom.some((e) => e.type === "investigation_step")).toBe(false); // nothing ran yet
    expect(h.model.calls.map((c) => c.request.role)).toEqual(["investigator"]);

    const run = await answer(h, "inv-main", "drop 3");
    const steps = run.custom.filter((e) => e.type === "investigation_step");
    expect(
      steps
        .filter((e) => e.status === "done")
        .map((e) => e.id)
        .sort(),
    ).toEqual([1, 2, 4]);
    expect(steps.some((e) => e.id === 3)).toBe(false);
    expect(run.custom.filter((e) => e.type === "result")).toHaveLength(3);

    const { outcomes, report } = await stateOf(h, "inv-main");
    // The comparison's cells are the fixture's own monthly totals.
    const totals = monthTotals();
    const compare = outcomes.find((o) => o.id === 1)!.rows![0];
    expect(Number(compare.base_value)).toBeCloseTo(totals["2025-02"], 2);
    expect(Number(compare.current_value)).toBeCloseTo(totals["2025-03"], 2);
    // The contribution step puts the planted segment first.
    const top = outcomes.find((o) => o.id === 2)!.rows![0];
    expect({ region: top.region, channel: top.channel }).toEqual(PLANTED);
    expect(Number(top.change)).toBeLessThan(Number(compare.change));

    expect(report!.writtenBy).toBe("model");
    expect(report!.notDone).toEqual([]);
    expect(report!.summary).toContain("marketplace");
    expect(report!.summary).toContain("south");
    // Every figure in each section is its cited cell, formatted: match the writer's text against it.
    const script = await h.model.callsBy("reporter")[0].reply.toolCalls![0].args;
    const sections = (script as { sections: { text: string }[] }).sections;
    sections.forEach((s, i) => expectFilledFromCells(s.text, report!.sections[i].text, outcomes));
    expect(report!.markdown).toContain("| region | channel | base_value |");
  }, 30_000); // the first test opens the DuckDB worker and its files

  it("runs at most QUARRY_INVESTIGATION_PARALLEL steps at once, and every step", async () => {
    const wh = await getWarehouse(testConfig(ENV).warehouse);
    const q = heldQueries(createWarehouseTools(wh));
    const h = await harness(investigationScript(smartScript()), {
      env: { ...ENV, QUARRY_INVESTIGATION_PARALLEL: "2" },
      tools: q.tools,
      dryRun: (sql, ctx) => wh.dryRun(sql, ctx), // each step reserves its bytes from its dry run
    });
    await ask(h, "inv-cap");
    const done = answer(h, "inv-cap", "run");
    await q.arrivedAt(2);
    expect(q.gate.inFlight).toBe(2); // two steps started and are held
    q.releaseOne();
    await q.arrivedAt(3);
    q.releaseOne();
    await q.arrivedAt(4);
    q.releaseAll();
    await done;
    expect(q.gate.arrived).toBe(4);
    expect(q.gate.maxInFlight).toBe(2);
  });

  it("holds the byte budget across steps running at once: each reserves its dry run's bytes first", async () => {
    // Two steps, each within the budget alone and over it together (DuckDB's estimate: the bytes
    // of the columns each reads, as BigQuery would bill them), both started at once.
    const wh = await getWarehouse(testConfig(ENV).warehouse);
    const ctx = {
      userId: "u",
      threadId: "t",
      runId: "r",
      bytesBilledSoFar: 0,
      scope: FULL_SCOPE,
      estimateBytes: true,
    };
    const [e1, e2] = await Promise.all(
      PLANTED_PLAN.steps
        .slice(0, 2)
        .map(async (st) => (await wh.dryRun(stepSql(PLANTED_PLAN, st, "duckdb"), ctx)).estimatedBytes),
    );
    expect(Math.min(e1, e2)).toBeGreaterThan(0);
    const budget = Math.max(e1, e2);
    const h = await harness(investigationScript(smartScript()), {
      env: { ...ENV, QUARRY_INVESTIGATION_PARALLEL: "2", QUARRY_INVESTIGATION_BYTES: String(budget) },
    });
    await ask(h, "inv-bytes");
    await answer(h, "inv-bytes", '{"drop": [3, 4]}');
    const { outcomes, report } = await stateOf(h, "inv-bytes");
    // Whichever reserved first ran; the other was refused before it ran (before: both ran).
    expect(outcomes.map((o) => o.status).sort()).toEqual(["done", "skipped"]);
    const skipped = outcomes.find((o) => o.status === "skipped")!;
    expect(skipped.reason).toMatch(/^not run, over a byte budget \(the investigation had [\d,]+ of its/);
    expect(skipped.reason).toMatch(/this step may use/);
    expect(report!.notDone.map((n) => n.id)).toEqual([skipped.id]);
    expect(report!.markdown).toContain("**Partial report:** 1 of 2 planned steps were not done");
  });

  it("never starts a step once the time budget is spent, and says so in a partial report", async () => {
    const q = heldQueries(await duckTools(testConfig(ENV)));
    let now = Date.parse("2026-01-15T10:00:00Z");
    const h = await harness(investigationScript(smartScript()), {
      env: { ...ENV, QUARRY_INVESTIGATION_PARALLEL: "1", QUARRY_INVESTIGATION_SECONDS: "60" },
      tools: q.tools,
      now: () => new Date(now),
    });
    await ask(h, "inv-time");
    const done = answer(h, "inv-time", "run");
    await q.arrivedAt(1);
    now += 61_000; // the step runs past the budget while held
    q.releaseAll();
    const run = await done;
    expect(q.gate.arrived).toBe(1); // steps 2–4 never reached the warehouse
    const { report, outcomes } = await stateOf(h, "inv-time");
    expect(outcomes.map((o) => o.status)).toEqual(["done", "skipped", "skipped", "skipped"]);
    expect(report!.notDone.map((n) => n.id)).toEqual([2, 3, 4]);
    expect(report!.notDone[0].reason).toMatch(/time budget \(60 s\) ran out/);
    expect(report!.markdown).toMatch(/Partial report:\*\* 3 of 4 planned steps were not done/);
    expect(run.custom.filter((e) => e.type === "investigation_step" && e.status === "skipped")).toHaveLength(
      3,
    );
    // The writer's report leans on step 2, which did not run: refused, so Quarry wrote it.
    expect(report!.writtenBy).toBe("quarry");
  });
});

describe("the gate", () => {
  it("refuses every step on a table outside the person's scope; the report says nothing ran", async () => {
    const h = await harness(investigationScript(smartScript()), { env: ENV });
    const shopOnly = limitedScope(["shop"]);
    await ask(h, "inv-scope", "good", shopOnly);
    const run = await answer(h, "inv-scope", "run", shopOnly);
    const { outcomes, report } = await stateOf(h, "inv-scope");
    expect(outcomes.map((o) => o.status)).toEqual(["failed", "failed", "failed", "failed"]);
    expect(outcomes[0].reason).toMatch(/retail\.sales/);
    expect(run.custom.filter((e) => e.type === "result")).toHaveLength(0);
    expect(h.model.callsBy("reporter")).toHaveLength(0);
    expect(report!.writtenBy).toBe("quarry");
    expect(report!.notDone.map((n) => n.id)).toEqual([1, 2, 3, 4]);
    expect(report!.markdown).toContain("No step of the plan produced a result.");
  });
});

describe("the report checker on the model's drafts", () => {
  const cases: [string, RegExp][] = [
    ["typed", /the number "38,614.01" is typed, not cited/],
    ["missing-step", /cites step 9, which is not in the plan/],
    ["uncited-cause", /claims a cause \("because"\) without a contribution, drivers or breakdown step/],
  ];
  for (const [variant, refusal] of cases) {
    it(`refuses a ${variant} report twice, then Quarry writes it from the results`, async () => {
      const h = await harness(investigationScript(smartScript()), { env: ENV });
      await ask(h, `inv-${variant}`, variant);
      await answer(h, `inv-${variant}`, "run");
      const { report, outcomes } = await stateOf(h, `inv-${variant}`);
      expect(h.model.callsBy("reporter")).toHaveLength(2);
      expect(h.model.callsBy("reporter")[1].request.system).toMatch(refusal);
      expect(report!.writtenBy).toBe("quarry");
      expect(report!.refusals!.join("\n")).toMatch(refusal);
      const prose = [report!.summary, ...report!.sections.map((s) => s.text)].join("\n");
      expect(prose).not.toMatch(/\b(because|driven by|due to)\b/);
      expect(report!.sections.map((s) => s.steps[0])).toEqual([1, 2, 3, 4]);
      expect(report!.sections[1].text).toContain("marketplace");
      expect(outcomes.every((o) => o.status === "done")).toBe(true);
    });
  }

  it("takes a draft fixed after the refusal", async () => {
    const h = await harness(investigationScript(smartScript()), { env: ENV });
    await ask(h, "inv-fixed", "typed-once");
    await answer(h, "inv-fixed", "run");
    const { report } = await stateOf(h, "inv-fixed");
    expect(report!.writtenBy).toBe("model");
    expect(report!.refusals!.join()).toMatch(/is typed/);
  });

  it("writes the report without the model once the token budget is spent", async () => {
    const h = await harness(investigationScript(smartScript()), {
      env: { ...ENV, QUARRY_INVESTIGATION_TOKENS: "100" },
    });
    await ask(h, "inv-tokens");
    await answer(h, "inv-tokens", "run");
    const { report } = await stateOf(h, "inv-tokens");
    expect(h.model.callsBy("reporter")).toHaveLength(0);
    expect(report!.writtenBy).toBe("quarry");
    expect(report!.markdown).toMatch(/model token budget \(100\) was spent before the report/);
  });

  it("holds the turn's cap on model calls: no plan retry and no writer call past it", async () => {
    const h = await harness(investigationScript(smartScript()), {
      env: { ...ENV, QUARRY_MAX_MODEL_CALLS: "1" },
    });
    await ask(h, "inv-calls");
    await answer(h, "inv-calls", "run");
    const { report, state } = await stateOf(h, "inv-calls");
    expect(h.model.calls.map((c) => c.request.role)).toEqual(["investigator"]);
    expect(report!.writtenBy).toBe("quarry");
    expect(report!.markdown).toMatch(/cap of 1 model calls \(QUARRY_MAX_MODEL_CALLS\) was reached/);
    expect(state.values.modelCalls).toBe(1);
    // A refused plan is not sent back past the cap either: one call, then the answer says why.
    const bad = await harness(investigationScript(smartScript()), {
      env: { ...ENV, QUARRY_MAX_MODEL_CALLS: "1" },
    });
    await ask(bad, "inv-calls-bad", "bad-plan");
    expect(bad.model.callsBy("investigator")).toHaveLength(1);
  });
});

describe("plans Quarry refuses", () => {
  it("sends a refused plan back once, and answers with what was wrong when it is refused again", async () => {
    const h = await harness(investigationScript(smartScript()), { env: ENV });
    const out = await ask(h, "inv-bad", "bad-plan");
    expect(out.values.at(-1)?.__interrupt__).toBeUndefined();
    expect(h.model.callsBy("investigator")).toHaveLength(2);
    expect(h.model.callsBy("investigator")[1].request.system).toMatch(/steps\.0\.kind: kind must be one of/);
    const { state } = await stateOf(h, "inv-bad");
    expect(String(state.values.finalAnswer)).toMatch(
      /could not make an investigation plan.*nothing was run/s,
    );
  });

  it("asks again when the person's edit cannot be applied, then runs the corrected answer", async () => {
    const h = await harness(investigationScript(smartScript()), { env: ENV });
    await ask(h, "inv-edit");
    const bad = await answer(h, "inv-edit", "drop 7");
    const again = (bad.values.at(-1)?.__interrupt__ as { value: { errors: string[] } }[])[0].value;
    expect(again.errors).toEqual(["No step 7 in the plan (its steps: 1, 2, 3, 4)."]);
    const edited = { ...PLANTED_PLAN, steps: PLANTED_PLAN.steps.slice(0, 2) };
    await answer(h, "inv-edit", JSON.stringify({ plan: edited }));
    const { outcomes, report } = await stateOf(h, "inv-edit");
    expect(outcomes.map((o) => o.id)).toEqual([1, 2]);
    expect(report!.writtenBy).toBe("model");
  });
});

/** Matches the writer's text (with citations) against the report's, and checks each filled cell. */
function expectFilledFromCells(template: string, filled: string, outcomes: StepOutcome[]) {
  const cites = [...template.matchAll(CITATION)];
  const pattern = template
    .split(CITATION)
    .filter((_, i) => i % 4 === 0)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join("(.+?)");
  const m = new RegExp(`^${pattern}$`).exec(filled);
  expect(m, `"${filled}" does not follow "${template}"`).not.toBeNull();
  cites.forEach((c, i) => {
    const row = outcomes.find((o) => o.id === Number(c[1]))!.rows![Number(c[2]) - 1];
    expect(m![i + 1]).toBe(formatCell(c[3], row[c[3]]));
  });
}
