/**
 * The answer as the page shows it: Markdown made steady while it streams, follow-up questions from
 * the `suggestions` event and, after a reload, from the answer message; the team's definitions an
 * answer used, likewise; starters from the context
 * file (`starter: true`, validated).
 */
import path from "node:path";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { steadyMarkdown } from "../../web/src/data/markdown";
import { chatReducer, EMPTY_CHAT } from "../../web/src/chat/reducer";
import { turnsFromMessages } from "../../web/src/chat/model";
import { DefinitionsUsed } from "../../web/src/chat/DefinitionsUsed";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { ContextFileError, KnowledgeBase, parseContextFile } from "../../functions/src/context";

describe("steadyMarkdown: an unfinished tail does not jump", () => {
  it.each([
    ["Revenue was **$5", "Revenue was **$5**"],
    ["Revenue was *mostly", "Revenue was *mostly*"],
    ["Done **", "Done"],
    ["Use `SUM(x", "Use `SUM(x`"],
    ["| month | revenue |\n|---|---|\n| 2025-01 | 5", "| month | revenue |\n|---|---|\n"],
    ["A list:\n- ", "A list:\n"],
    ["Intro\n\n| channel | share |\n| --", "Intro\n"],
    ["Intro\n\n| channel | share |\n| --- | --- |\n", "Intro\n\n| channel | share |\n| --- | --- |\n"],
    ["See [the docs](https://exa", "See"],
    ["```sql\nSELECT 1", "```sql\nSELECT 1\n```"],
    ["**Bold** and done.", "**Bold** and done."],
    ["- item one\n* item two", "- item one\n* item two"],
  ])("%j → %j", (input, output) => {
    expect(steadyMarkdown(input)).toBe(output);
  });
});

describe("follow-up questions on the page", () => {
  it("come from the suggestions event while live, and from the answer message after a reload", () => {
    let s = chatReducer(EMPTY_CHAT, { type: "submitted", key: "q1", question: "Orders by channel?" });
    s = chatReducer(s, {
      type: "stream",
      event: "custom",
      data: { type: "suggestions", questions: ["Revenue by channel?", "Top products?"] },
    });
    expect(s.turns[0].suggestions).toEqual(["Revenue by channel?", "Top products?"]);
    const turns = turnsFromMessages([
      { type: "human", content: "Orders by channel?", id: "q1" },
      {
        type: "ai",
        content: "Web leads.\n:::follow-ups\n- Revenue by channel?\n- hr.salaries?",
        id: "a1",
        response_metadata: { quarry_suggestions: ["Revenue by channel?", 7, ""] },
      },
    ]);
    // The server's filtered list, not whatever the raw text holds.
    expect(turns[0].suggestions).toEqual(["Revenue by channel?"]);
  });
});

describe("team definitions an answer used, on the page", () => {
  const food = {
    name: "food revenue",
    source: "dbt",
    file: "models/marts/order_items.yml",
    approved: false,
  } as const;

  it("come from the definitions event while live, and from the answer message after a reload (well-formed only)", () => {
    let s = chatReducer(EMPTY_CHAT, { type: "submitted", key: "q1", question: "Food revenue?" });
    s = chatReducer(s, {
      type: "stream",
      event: "custom",
      data: { type: "definitions", definitions: [food] },
    });
    expect(s.turns[0].definitions).toEqual([food]);
    const turns = turnsFromMessages([
      { type: "human", content: "Food revenue?", id: "q1" },
      {
        type: "ai",
        content: "Food brought most.",
        id: "a1",
        response_metadata: {
          quarry_definitions: [food, { name: "x", source: "elsewhere", approved: true }, 7],
        },
      },
    ]);
    expect(turns[0].definitions).toEqual([food]);
  });

  it("are shown with their source and file, and an imported one as not reviewed in Quarry", () => {
    const html = renderToStaticMarkup(
      createElement(DefinitionsUsed, {
        definitions: [food, { name: "revenue", source: "authored", file: "shop.yaml", approved: true }],
      }),
    );
    expect(html).toContain('aria-label="Team definitions used"');
    expect(html).toMatch(
      /<strong>food revenue<\/strong> <span class="muted">— dbt \(models\/marts\/order_items\.yml\), imported: not reviewed in Quarry<\/span>/,
    );
    expect(html).toMatch(
      /<strong>revenue<\/strong> <span class="muted">— Quarry context \(shop\.yaml\)<\/span>/,
    );
  });
});

describe("starters in the context file", () => {
  const shop = readFileSync(path.resolve(__dirname, "../../functions/context/shop.yaml"), "utf8");

  it("the shipped file marks starters, and the knowledge lists them", () => {
    const { context } = parseContextFile(shop, "shop.yaml");
    const starters = new KnowledgeBase([context]).starters();
    expect(starters).toContain("What was revenue by month in 2025?");
    expect(starters.length).toBeGreaterThanOrEqual(2);
  });

  it("refuses a starter that is not true/false, and too many starters, naming the line", () => {
    const bad =
      "dataset: x\nverified_queries:\n  - question: a\n    sql: SELECT 1\n    starter: yes please\n";
    expect(() => parseContextFile(bad, "x.yaml")).toThrow(ContextFileError);
    try {
      parseContextFile(bad, "x.yaml");
    } catch (e) {
      expect((e as ContextFileError).problems[0]).toMatchObject({ line: 5 });
      expect((e as ContextFileError).problems[0].message).toMatch(/starter/);
    }
    const many = [
      "dataset: x",
      "verified_queries:",
      ...Array.from({ length: 7 }, (_, i) => `  - question: q${i}\n    sql: SELECT ${i}\n    starter: true`),
    ].join("\n");
    try {
      parseContextFile(many, "x.yaml");
      expect.unreachable();
    } catch (e) {
      expect((e as ContextFileError).problems).toEqual([
        { file: "x.yaml", line: 23, message: "7 verified queries are marked starter: true; mark at most 6" },
      ]);
    }
  });
});
