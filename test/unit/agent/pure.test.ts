/** Routers, context builders and the model preflight, on their own. */
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import {
  routeAfterIngress,
  routeAfterPlanner,
  routeAfterVerifier,
} from "../../../functions/src/agent/routers";
import {
  findProblems,
  refinementFor,
  failureSummary,
} from "../../../functions/src/agent/prompt-inputs/results";
import {
  priorConversation,
  splitForSummary,
  pendingToolCalls,
} from "../../../functions/src/agent/prompt-inputs/history";
import {
  buildSystemContext,
  renderPreamble,
} from "../../../functions/src/agent/prompt-inputs/system-context";
import { preflightVertex, ModelConfigError } from "../../../functions/src/agent/model";
import { refusalFor } from "../../../functions/src/agent/nodes/ingress";
import type { TurnResult } from "../../../functions/src/agent/state";
import { testConfig } from "./harness";

const call = new AIMessage({
  content: "",
  tool_calls: [{ id: "c1", name: "bq_query", args: { sql: "SELECT 1" } }],
});

describe("routers", () => {
  it("route by state alone", () => {
    expect(routeAfterIngress({ refusal: "no" })).toBe("summarizer");
    expect(routeAfterIngress({ refusal: null })).toBe("planner");
    expect(routeAfterPlanner({ messages: [new HumanMessage("q"), call], verdict: null })).toBe("executor");
    expect(routeAfterPlanner({ messages: [new HumanMessage("q")], verdict: null })).toBe("generator");
    expect(routeAfterPlanner({ messages: [call], verdict: { action: "give_up" } })).toBe("generator");
    expect(routeAfterVerifier({ verdict: { action: "replan", reason: "x" } })).toBe("planner");
    expect(routeAfterVerifier({ verdict: { action: "answer" } })).toBe("generator");
    expect(routeAfterVerifier({ verdict: { action: "give_up" } })).toBe("generator");
  });
});

const errorResult = (
  engineMessage: string,
  category: "invalid_query" | "timeout" = "invalid_query",
): TurnResult => ({
  toolCallId: "c1",
  tool: "bq_query",
  args: {},
  artifact: {
    kind: "error",
    category,
    message: engineMessage,
    details: { engineMessage },
    sql: "SELECT prodct FROM t",
  },
});

describe("context builders", () => {
  it("turn BigQuery's 'Did you mean' into a concrete rewrite", () => {
    const [p] = findProblems([errorResult("Unrecognized name: prodct; Did you mean product? at [1:8]")]);
    expect(refinementFor(p)).toBe(
      "The column prodct does not exist; the engine suggests product. Rewrite the SQL using product.\nFailed SQL:\nSELECT prodct FROM t",
    );
  });

  it("name what failed for the honest answer", () => {
    const problems = findProblems([errorResult("Query exceeded 60 s", "timeout")]);
    expect(failureSummary(problems)).toBe("bq_query failed (timeout): Query exceeded 60 s");
  });

  it("keep earlier turns as plain text and find pending tool calls", () => {
    const history = [
      new HumanMessage("q1"),
      call,
      new ToolMessage({ content: "rows", tool_call_id: "c1" }),
      new AIMessage("a1"),
      new HumanMessage("q2"),
      call,
    ];
    expect(priorConversation(history).map((m) => [m.getType(), m.content])).toEqual([
      ["human", "q1"],
      ["ai", "a1"],
    ]);
    expect(pendingToolCalls(history).map((c) => c.id)).toEqual(["c1"]);
    expect(pendingToolCalls(history.slice(0, 4))).toEqual([]);
  });

  it("split only when over budget, keeping the latest turn", () => {
    const history = [
      new HumanMessage("x".repeat(400)),
      new AIMessage("y".repeat(400)),
      new HumanMessage("latest"),
    ];
    expect(splitForSummary(history, "", 1_000).older).toEqual([]);
    const { older, keep } = splitForSummary(history, "", 100);
    expect(older).toHaveLength(2);
    expect(keep.map((m) => m.content)).toEqual(["latest"]);
  });

  it("render the system context once per turn with tables and user context", () => {
    const sys = buildSystemContext({
      now: new Date("2026-01-15T10:00:00Z"),
      dialect: "DuckDB SQL",
      dialectNote: "Tables are schema.table.",
      tables: [{ id: "shop.orders", rowCount: 5, description: "Orders." }],
    });
    const text = renderPreamble(sys, { displayName: "Ada", timezone: "Europe/Paris" }, "earlier summary");
    expect(text).toContain("Current time: 2026-01-15T10:00:00.000Z");
    expect(text).toContain("- shop.orders, 5 rows: Orders.");
    expect(text).toContain("The user's name is Ada.");
    expect(text).toContain("Summary of the earlier conversation: earlier summary");
  });

  it("list the conversation's uploaded tables with their columns, once, even when linking chose other tables", () => {
    const upload = {
      name: "targets",
      file: 'targets "2025".csv',
      table: "uploads.targets",
      location: "/tmp/x.parquet",
      columns: [
        { name: "month", type: "VARCHAR" },
        { name: "target", type: "BIGINT" },
      ],
      rows: 12,
    };
    const listed = buildSystemContext({
      now: new Date(),
      dialect: "DuckDB SQL",
      dialectNote: "",
      tables: [{ id: "shop.orders" }, { id: "uploads.targets", rowCount: 12 }],
      uploads: [upload],
    });
    expect(listed.tables).toEqual([
      "- shop.orders",
      '- uploads.targets, 12 rows: the person\'s uploaded file "targets  2025 .csv" (columns: month VARCHAR, target BIGINT)',
    ]);
    const linked = buildSystemContext({
      now: new Date(),
      dialect: "DuckDB SQL",
      dialectNote: "",
      tables: [],
      tableLines: ["- shop.orders (order_id INTEGER)"],
      uploads: [upload],
    });
    expect(linked.tables).toHaveLength(2);
    expect(linked.tables[1]).toContain("uploads.targets");
  });

  it("refuse empty, oversized and write requests", () => {
    expect(refusalFor([new HumanMessage("  ")])).toMatch(/empty/);
    expect(refusalFor([new HumanMessage("a".repeat(9_000))])).toMatch(/under 8000 characters/);
    expect(refusalFor([new HumanMessage("please delete from shop.orders")])).toMatch(/only reads data/);
    expect(refusalFor([new HumanMessage("How many orders were updated last week?")])).toBeNull();
  });
});

describe("model preflight", () => {
  const model = testConfig().model;
  const none = { credentialsFileExists: false, adcFileExists: false, onGoogleCloud: false };

  it("fails fast without credentials, saying what to set", () => {
    expect(() => preflightVertex(model, none)).toThrow(ModelConfigError);
    expect(() => preflightVertex(model, none)).toThrow(/gcloud auth application-default login/);
    expect(() => preflightVertex(model, { ...none, credentialsFile: "/nope.json" })).toThrow(
      /does not exist/,
    );
  });

  it("accepts ADC, Google Cloud, or an emulator host", () => {
    expect(() => preflightVertex(model, { ...none, adcFileExists: true })).not.toThrow();
    expect(() => preflightVertex(model, { ...none, onGoogleCloud: true })).not.toThrow();
    expect(() => preflightVertex({ ...model, emulatorHost: "127.0.0.1:9" }, none)).not.toThrow();
    expect(() => preflightVertex({ ...model, emulatorHost: "http://x" }, none)).toThrow(/host:port/);
  });
});

describe("a question's images and PDFs in the prompts", () => {
  const PNG = Buffer.from("89504e470d0a1a0a00", "hex").toString("base64");
  const asked = new HumanMessage({
    content: [
      { type: "text", text: "Make me this for Q3" },
      { type: "image", mimeType: "image/png", data: PNG, metadata: { name: "q2.png" } },
      { type: "file", mimeType: "application/pdf", data: "JVBERi0=", metadata: { filename: "plan.pdf" } },
    ],
  });

  it("earlier turns name them, without their bytes", async () => {
    const { priorConversation } = await import("../../../functions/src/agent/prompt-inputs/history");
    const prior = priorConversation([asked, new AIMessage("Here it is."), new HumanMessage("And Q4?")]);
    expect(prior.map((m) => m.content)).toEqual([
      "Make me this for Q3 [image: q2.png] [PDF: plan.pdf]",
      "Here it is.",
    ]);
    expect(JSON.stringify(prior)).not.toContain(PNG);
  });

  it("the current question keeps them, for the answer's call", async () => {
    const { questionWithAttachments } = await import("../../../functions/src/agent/prompt-inputs/history");
    expect(questionWithAttachments(asked).content).toEqual([
      { type: "text", text: "Make me this for Q3" },
      { type: "image", mimeType: "image/png", data: PNG, metadata: { name: "q2.png" } },
      { type: "file", mimeType: "application/pdf", data: "JVBERi0=", metadata: { filename: "plan.pdf" } },
    ]);
    expect(questionWithAttachments(new HumanMessage("Just words")).content).toBe("Just words");
  });
});

describe("a question's attachments in the summary budget", () => {
  it("count by their data, so the turn that carried one is folded into the summary, which names it", async () => {
    const { estimateTokens, splitForSummary, transcript } =
      await import("../../../functions/src/agent/prompt-inputs/history");
    const image = "A".repeat(40_000);
    const shown = new HumanMessage({
      content: [
        { type: "text", text: "Make me this" },
        { type: "image", mimeType: "image/png", data: image, metadata: { name: "q2.png" } },
      ],
    });
    const conversation = [shown, new AIMessage("Done."), new HumanMessage("Now for Q4?")];
    expect(estimateTokens([shown])).toBeGreaterThan(10_000);
    const { older, keep } = splitForSummary(conversation, "", 2_000);
    expect(older).toEqual([shown, conversation[1]]);
    expect(keep).toEqual([conversation[2]]);
    expect(transcript(older)).toBe("User: Make me this [image: q2.png]\nQuarry: Done.");
  });
});
