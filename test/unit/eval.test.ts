/**
 * The eval harness (eval/): result comparison, question files, the shipped question set (every gold
 * SQL runs on the sample warehouse and equals the same answer computed another way), and an exact
 * accuracy from a scripted model that answers some questions with the gold SQL and others wrongly.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { MemorySaver } from "@langchain/langgraph";
import { afterAll, describe, expect, it } from "vitest";
import { questionOrders, sameResult, type Table } from "../../eval/compare";
import { parseQuestions, runEval } from "../../eval/harness";
import { createAgentGraph } from "../../functions/src/agent";
import { closeWarehouses, getWarehouse } from "../../functions/src/tools";
import { ScriptedChatModel } from "../support/scripted-model";
import { currentTurnOf, questionOf, smartScript, type Script } from "../support/scripted-model-script";
import { duckTools, testConfig } from "./agent/harness";
import { FULL_SCOPE } from "../../functions/src/tools/scope";

const FILE = path.resolve(__dirname, "../../eval/questions/shop.jsonl");
const warehouse = () => getWarehouse(testConfig().warehouse);

afterAll(async () => {
  await closeWarehouses();
});

const t = (columns: string[], rows: unknown[][]): Table => ({
  columns,
  rows: rows.map((r) => Object.fromEntries(columns.map((c, i) => [c, r[i]]))),
});

describe("result comparison", () => {
  const gold = t(
    ["category", "revenue"],
    [
      ["Books", 10.5],
      ["Toys", 20],
    ],
  );
  it("ignores column names, column order, extra columns and (unordered) row order", () => {
    expect(
      sameResult(
        gold,
        t(
          ["rev", "cat"],
          [
            [20, "Toys"],
            [10.5, "Books"],
          ],
        ),
        false,
      ),
    ).toBe(true);
    expect(
      sameResult(
        gold,
        t(
          ["cat", "n", "r"],
          [
            ["Books", 3, "10.50"],
            ["Toys", 4, 20.001],
          ],
        ),
        false,
      ),
    ).toBe(true);
  });
  it("fails on wrong values, missing columns or rows, and on row order when the question orders", () => {
    expect(
      sameResult(
        gold,
        t(
          ["cat", "r"],
          [
            ["Books", 10.5],
            ["Toys", 21],
          ],
        ),
        false,
      ),
    ).toBe(false);
    expect(sameResult(gold, t(["cat"], [["Books"], ["Toys"]]), false)).toBe(false);
    expect(sameResult(gold, t(["cat", "r"], [["Books", 10.5]]), false)).toBe(false);
    expect(
      sameResult(
        gold,
        t(
          ["c", "r"],
          [
            ["Toys", 20],
            ["Books", 10.5],
          ],
        ),
        true,
      ),
    ).toBe(false);
    expect(
      sameResult(
        gold,
        t(
          ["c", "r"],
          [
            ["Books", 10.5],
            ["Toys", 20],
          ],
        ),
        true,
      ),
    ).toBe(true);
    // Values must line up in the same rows, not only per column.
    const g2 = t(
      ["a", "b"],
      [
        [1, "x"],
        [2, "y"],
      ],
    );
    expect(
      sameResult(
        g2,
        t(
          ["a", "b"],
          [
            [1, "y"],
            [2, "x"],
          ],
        ),
        false,
      ),
    ).toBe(false);
  });
  it("keeps close numbers apart when matching rows (no precision lost in sorting)", () => {
    const g = t(
      ["c", "p"],
      [
        ["a", 6.14],
        ["b", 6.16],
        ["c", 5.9],
      ],
    );
    expect(
      sameResult(
        g,
        t(
          ["c", "p"],
          [
            ["b", 6.16],
            ["c", 5.9],
            ["a", 6.14],
          ],
        ),
        false,
      ),
    ).toBe(true);
    expect(
      sameResult(
        g,
        t(
          ["c", "p"],
          [
            ["a", 6.16],
            ["b", 6.14],
            ["c", 5.9],
          ],
        ),
        false,
      ),
    ).toBe(false);
  });
  it("reads dates in their usual spellings as the same day", () => {
    const d = t(["month"], [["2025-01-01"]]);
    expect(sameResult(d, t(["m"], [["2025-01-01 00:00:00"]]), false)).toBe(true);
    expect(sameResult(d, t(["m"], [["2025-01-01T00:00:00.000Z"]]), false)).toBe(true);
    expect(sameResult(d, t(["m"], [["2025-02-01"]]), false)).toBe(false);
  });
  it("treats row order as part of the answer only when the question asks for an order", () => {
    expect(questionOrders("Top 10 products by margin", "SELECT … ORDER BY margin DESC LIMIT 10")).toBe(true);
    expect(questionOrders("Revenue by category", "SELECT … ORDER BY revenue DESC")).toBe(false);
  });
});

describe("question files", () => {
  it("name the line of a bad entry", () => {
    expect(() => parseQuestions('{"id":"a","question":"q","sql":"SELECT 1"}\n{oops', "q.jsonl")).toThrow(
      /^q\.jsonl:2: not valid JSON/,
    );
    expect(() => parseQuestions('{"id":"a","question":"q"}', "q.jsonl")).toThrow(/^q\.jsonl:1: sql: /);
    const twice = '{"id":"a","question":"q","sql":"SELECT 1"}\n{"id":"a","question":"r","sql":"SELECT 2"}';
    expect(() => parseQuestions(twice, "q.jsonl")).toThrow(/q\.jsonl:2: id "a" is used twice/);
  });
});

describe("the shipped question set", () => {
  const questions = parseQuestions(readFileSync(FILE, "utf8"), FILE);
  it.each(questions.map((q) => [q.id, q] as const))(
    "%s: the gold SQL equals the answer computed another way",
    async (_id, q) => {
      const w = await warehouse();
      const ctx = { userId: "t", threadId: "t", runId: "t", bytesBilledSoFar: 0, scope: FULL_SCOPE };
      const run = async (sql: string): Promise<Table> => {
        const r = await w.query(sql, ctx);
        return { columns: r.columns.map((c) => c.name), rows: r.rows as Table["rows"] };
      };
      const gold = await run(q.sql);
      expect(gold.rows.length).toBeGreaterThan(0);
      expect(q.check, "each question carries a second way to compute its answer").toBeDefined();
      expect(sameResult(gold, await run(q.check!), q.ordered ?? questionOrders(q.question, q.sql))).toBe(
        true,
      );
    },
  );
});

describe("the harness", () => {
  it("reports exactly the accuracy of a model that answers 3 of 5 questions right", async () => {
    const questions = parseQuestions(
      [
        { id: "q1", question: "How many orders?", sql: "SELECT COUNT(*) AS n FROM shop.orders" },
        { id: "q2", question: "How many customers?", sql: "SELECT COUNT(*) AS n FROM shop.customers" },
        {
          id: "q3",
          question: "Orders per channel?",
          sql: "SELECT channel, COUNT(*) AS n FROM shop.orders GROUP BY 1",
        },
        { id: "q4", question: "How many products?", sql: "SELECT COUNT(*) AS n FROM shop.products" },
        { id: "q5", question: "Say hello", sql: "SELECT 1 AS one" },
      ]
        .map((q) => JSON.stringify(q))
        .join("\n"),
      "inline",
    );
    // What the "model" writes per question: right (another spelling), wrong, or no query at all.
    const written: Record<string, string | undefined> = {
      "How many orders?": "SELECT COUNT(order_id) AS orders FROM shop.orders",
      "How many customers?": "SELECT COUNT(*) AS c FROM shop.customers WHERE country = 'DE'",
      "Orders per channel?":
        "SELECT COUNT(*) AS orders, channel FROM shop.orders GROUP BY channel ORDER BY 1",
      "How many products?": "SELECT COUNT(*) FROM shop.products",
      "Say hello": undefined,
    };
    const script: Script = (req) => {
      const sql = written[questionOf(req)];
      if (req.role === "planner") {
        const done = currentTurnOf(req).some((x) => x.role === "tool");
        return sql && !done
          ? { toolCalls: [{ name: "bq_query", args: { sql } }] }
          : { text: "No data needed." };
      }
      return { text: "Here you are." };
    };
    const cfg = testConfig();
    const graph = await createAgentGraph({
      checkpointer: new MemorySaver(),
      model: new ScriptedChatModel(script),
      tools: await duckTools(cfg),
      config: cfg,
    });
    const report = await runEval(graph, await warehouse(), questions);
    expect(report).toMatchObject({ total: 5, correct: 3, executionAccuracy: 0.6 });
    expect(report.questions.map((q) => [q.id, q.correct])).toEqual([
      ["q1", true],
      ["q2", false],
      ["q3", true],
      ["q4", true],
      ["q5", false],
    ]);
    expect(report.questions[4].error).toMatch(/no query ran/);
    expect(report.questions[0]).toMatchObject({ sql: written["How many orders?"], modelCalls: 2 });
    expect(report.questions[0].tokens).toBeGreaterThan(0);
  });

  it("a clarifying question counts as wrong unless the line says what the user would answer", async () => {
    const questions = parseQuestions(
      [
        { id: "a1", question: "How are we doing?", sql: "SELECT COUNT(*) AS n FROM shop.customers" },
        {
          id: "a2",
          question: "How are we doing?",
          sql: "SELECT COUNT(*) AS n FROM shop.customers",
          answer: "Number of customers",
        },
        { id: "a3", question: "How many orders?", sql: "SELECT COUNT(*) AS n FROM shop.orders" },
      ]
        .map((q) => JSON.stringify(q))
        .join("\n"),
      "inline",
    );
    const cfg = testConfig();
    const graph = await createAgentGraph({
      checkpointer: new MemorySaver(),
      model: new ScriptedChatModel(smartScript()),
      tools: await duckTools(cfg),
      config: cfg,
    });
    const report = await runEval(graph, await warehouse(), questions);
    expect(report).toMatchObject({ total: 3, correct: 2, asked: 2 });
    expect(report.questions[0]).toMatchObject({ correct: false, asked: "Which measure do you mean?" });
    expect(report.questions[0].error).toMatch(/asked instead of answering/);
    expect(report.questions[1]).toMatchObject({ correct: true, asked: "Which measure do you mean?" });
    expect(report.questions[1].sql).toContain("FROM shop.customers");
    expect(report.questions[2]).toMatchObject({ correct: true });
    expect(report.questions[2].asked).toBeUndefined();
  });
});
