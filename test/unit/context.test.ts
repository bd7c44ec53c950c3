/**
 * Authored context (functions/src/context): the shipped file for the sample dataset loads against
 * the real DuckDB warehouse; bad files are refused with the line of each problem; a question gets
 * the rules, the glossary terms it mentions, the notes of the tables involved and the most similar
 * verified queries — and the planner's prompt carries them.
 */
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  ContextFileError,
  KnowledgeBase,
  loadKnowledge,
  parseContextFile,
  renderKnowledge,
  validateAgainstWarehouse,
} from "../../functions/src/context";
import { closeWarehouses, getWarehouse } from "../../functions/src/tools";
import { byRole } from "../support/scripted-model-script";
import { MemorySaver } from "@langchain/langgraph";
import { createAgentGraph } from "../../functions/src/agent";
import { ScriptedChatModel } from "../support/scripted-model";
import { runTurn, testConfig, type Harness } from "./agent/harness";

const DIR = path.resolve(__dirname, "../../functions/context");
const warehouse = () => getWarehouse(testConfig().warehouse);

afterAll(async () => {
  await closeWarehouses();
});

/** The problems a file has, as "line: message" strings. */
async function problemsOf(yaml: string): Promise<string[]> {
  try {
    await validateAgainstWarehouse(parseContextFile(yaml, "ctx.yaml"), await warehouse(), "ctx.yaml");
    return [];
  } catch (err) {
    if (!(err instanceof ContextFileError)) throw err;
    expect(err.message).toMatch(/^The context file has \d+ problems?:/);
    return err.problems.map((p) => `${p.line}: ${p.message}`);
  }
}

describe("the shipped context file for the sample dataset", () => {
  it("loads against the DuckDB sample warehouse with no problems", async () => {
    const { knowledge, report } = await loadKnowledge(DIR, await warehouse(), { strict: true });
    expect(report.loaded.map((f) => path.basename(f))).toEqual(["shop.yaml"]);
    expect(knowledge.empty).toBe(false);
  });

  it("gives a question its terms, notes and the closest verified queries", async () => {
    const { knowledge } = await loadKnowledge(DIR, await warehouse());
    const k = knowledge.forQuestion("What were sales by month in 2025?");
    expect(k.glossary.map((g) => g.term)).toEqual(["revenue"]); // "sales" is a synonym
    expect(k.examples[0].question).toBe("What was revenue by month in 2025?");
    expect(k.rules.join(" ")).toMatch(/excludes cancelled and returned/);
    expect(k.notes["shop.orders.status"]).toMatch(/not revenue/);
    const paid = knowledge.forQuestion("How many paid search sessions reach checkout?");
    expect(paid.glossary.map((g) => g.term)).toContain("paid search");
    expect(paid.examples[0].question).toMatch(/paid search/);
    expect(paid.notes["shop.web_events.traffic_source"]).toMatch(/paid_search/);
    // A greeting gets the rules and nothing else.
    const hello = knowledge.forQuestion("hello there");
    expect(hello.glossary).toEqual([]);
    expect(hello.examples).toEqual([]);
  });

  it("renders as a prompt block, and nothing at all without context", () => {
    const k = new KnowledgeBase([
      {
        dataset: "shop",
        rules: ["Revenue excludes cancelled orders."],
        glossary: [{ term: "revenue", synonyms: ["sales"], meaning: "Money in.", sql: "SUM(x)" }],
        tables: {},
        joins: [],
        verified_queries: [{ question: "Revenue by month", sql: "SELECT 1" }],
      },
    ]).forQuestion("revenue by month");
    expect(renderKnowledge(k)).toBe(
      "Rules that always apply (from the team):\n- Revenue excludes cancelled orders.\n" +
        "Business terms in this question (use these definitions):\n- revenue (also: sales): Money in. Computed as: SUM(x)\n" +
        "Verified queries for similar questions (adapt them; they are known to be right):\n" +
        "- Question: Revenue by month\n  Verified query: SELECT 1\n",
    );
    expect(renderKnowledge(new KnowledgeBase([]).forQuestion("revenue"))).toBe("");
  });
});

describe("a bad context file is refused with the line of each problem", () => {
  it("names an unknown table and an unknown column", async () => {
    const problems = await problemsOf(
      [
        "dataset: shop",
        "tables:",
        "  orders:",
        "    columns:",
        "      statuz: typo",
        "  invoices:",
        "    description: x",
      ].join("\n"),
    );
    expect(problems).toEqual([
      expect.stringMatching(/^5: column "statuz" is not in shop\.orders \(columns: order_id, /),
      expect.stringMatching(/^6: table "invoices" is not in the warehouse \(tables: shop\.customers, /),
    ]);
  });

  it("dry-runs verified queries and names the one that fails", async () => {
    const problems = await problemsOf(
      [
        "dataset: shop",
        "verified_queries:",
        "  - question: ok",
        "    sql: SELECT COUNT(*) FROM shop.orders",
        "  - question: broken",
        "    sql: SELECT nope FROM shop.orders",
      ].join("\n"),
    );
    expect(problems).toEqual([expect.stringMatching(/^6: verified query does not pass the dry run: .*nope/)]);
  });

  it("refuses a term defined twice (synonyms included), naming both lines", () => {
    const yaml = [
      "dataset: shop",
      "glossary:",
      "  - term: revenue",
      "    synonyms: [sales]",
      "    meaning: a",
      "  - term: Sales",
      "    meaning: b",
    ].join("\n");
    expect(() => parseContextFile(yaml, "ctx.yaml")).toThrow(
      /ctx\.yaml:6: glossary term "Sales" is defined twice \(first on line 4\)/,
    );
  });

  it("reports shape errors and YAML syntax errors at their lines", () => {
    const shape = ["dataset: shop", "glossary:", "  - term: revenue", "    meening: typo"].join("\n");
    expect(() => parseContextFile(shape, "ctx.yaml")).toThrow(/ctx\.yaml:3: glossary\.0\.meaning: /);
    expect(() => parseContextFile(shape, "ctx.yaml")).toThrow(
      /ctx\.yaml:3: glossary\.0: Unrecognized key: "meening"/,
    );
    expect(() => parseContextFile("dataset: shop\nrules: [a\n", "ctx.yaml")).toThrow(
      /ctx\.yaml:\d+: not valid YAML/,
    );
    expect(() => parseContextFile("dataset: shop\nextra: 1\n", "ctx.yaml")).toThrow(
      /Unrecognized key: "extra"/,
    );
  });

  it("leaves a bad file out, reported, and keeps the good ones", async () => {
    const { mkdtempSync, writeFileSync, copyFileSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const dir = mkdtempSync(path.join(tmpdir(), "quarry-ctx-"));
    copyFileSync(path.join(DIR, "shop.yaml"), path.join(dir, "shop.yaml"));
    writeFileSync(path.join(dir, "bad.yaml"), "dataset: shop\ntables:\n  nope: {}\n");
    writeFileSync(path.join(dir, "other.yaml"), "dataset: elsewhere\n");
    const { knowledge, report } = await loadKnowledge(dir, await warehouse());
    expect(report.loaded.map((f) => path.basename(f))).toEqual(["shop.yaml"]);
    expect(report.skipped.map((f) => path.basename(f))).toEqual(["other.yaml"]);
    expect(report.failed.map((e) => e.problems[0].line)).toEqual([3]);
    expect(knowledge.forQuestion("revenue").glossary[0].term).toBe("revenue");
    await expect(loadKnowledge(dir, await warehouse(), { strict: true })).rejects.toThrow(ContextFileError);
  });
});

describe("the planner's prompt", () => {
  it("carries the rules, terms and verified examples chosen for the question (context loaded by default)", async () => {
    // No tools given: the graph builds the warehouse from config and loads functions/context for it.
    const model = new ScriptedChatModel(
      byRole({ planner: [{ text: "No data needed." }], generator: [{ text: "ok" }] }),
    );
    const graph = await createAgentGraph({ checkpointer: new MemorySaver(), model, config: testConfig() });
    const out = await runTurn(
      { graph, model } as unknown as Harness,
      "t-ctx",
      "What were sales by month in 2025?",
    );
    expect(out.error).toBeUndefined();
    const system = model.callsBy("planner")[0].request.system;
    expect(system).toContain("Rules that always apply (from the team):");
    expect(system).toMatch(/- revenue \(also: sales, turnover, gmv\): Money from orders/);
    expect(system).toMatch(
      /Question: What was revenue by month in 2025\?\n {2}Verified query: SELECT date_trunc/,
    );
    expect(system).toMatch(/- shop\.orders\.status: Order status/);
  });
});

describe("npm run context", () => {
  it("prints, as JSON, what the planner gets for a question", { timeout: 60_000 }, async () => {
    const { execFile } = await import("node:child_process");
    const { mkdtempSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const root = path.resolve(__dirname, "../..");
    const env = { ...process.env, HOME: mkdtempSync(path.join(tmpdir(), "quarry-ctx-home-")) };
    const run = (question: string) =>
      new Promise<string>((resolve, reject) =>
        execFile(
          process.execPath,
          ["--import", "tsx", "scripts/context.ts", question, "--json"],
          { cwd: root, env, timeout: 55_000 },
          (err, out, errOut) => (err ? reject(new Error(`${err.message}\n${errOut}`)) : resolve(out)),
        ),
      );
    const out = JSON.parse(await run("What were sales by month in 2025?")) as Record<string, unknown>;
    // Best first: the tables the revenue definition reads lead; the small sample is given whole.
    expect(new Set((out.tables as string[]).slice(0, 2))).toEqual(
      new Set(["shop.order_items", "shop.orders"]),
    );
    expect([...(out.tables as string[])].sort()).toEqual([
      "shop.customers",
      "shop.order_items",
      "shop.orders",
      "shop.products",
      "shop.web_events",
    ]);
    expect(out.glossary).toEqual(["revenue"]);
    expect((out.examples as string[])[0]).toBe("What was revenue by month in 2025?");
    expect(out.promptTokens).toBeGreaterThan(300);
    const de = JSON.parse(await run("How many customers in Germany ordered through the mobile app?")) as {
      values: string[];
      columns: string[];
    };
    expect(de.columns).toEqual(expect.arrayContaining(["shop.customers.country", "shop.orders.channel"]));
    expect(de.values).toEqual(
      expect.arrayContaining([
        "Germany → shop.customers.country = 'DE'",
        "mobile app → shop.orders.channel = 'mobile_app'",
      ]),
    );
  });
});
