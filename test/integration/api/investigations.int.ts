/**
 * An investigation through the functions emulator and the official SDK client, on the planted
 * cause (the fixture uploaded to the conversation as `uploads.sales`): `input.investigate` starts
 * it, the plan comes back as the thread's interrupt, the person's edit goes back as
 * `command.resume` in a background run (the task queue, durable like any run), the steps report
 * progress, each step is audited, the report's figures are the steps' cells, the report is the
 * conversation's answer, and a follow-up question sees it; the same through MCP's `ask`.
 */
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { deleteApp, initializeApp, type App } from "firebase-admin/app";
import { getFirestore } from "firebase-admin/firestore";
import type { Client } from "@langchain/langgraph-sdk";
import type { InvestigationReport, PlanReview } from "../../../functions/src/contract/investigations";
import { signUp, type TestUser } from "../../support/auth-emulator";
import { call, sdkClient } from "../../support/api-client";
import { HOLD_URL_ENV, holdClient, type Holds } from "../../support/hold-control";
import { stackEnv } from "../../support/stack-env";
import { readFileSync } from "node:fs";
import { PLANTED, PLANTED_PLAN, RETAIL_SALES_CSV, UPLOADED_TABLE } from "../../support/investigation-script";
import { connectMcp, makeToken, type ToolResult } from "../../support/mcp-client";

let api: string;
let alice: TestUser;
let client: Client;
let holds: Holds;
let admin: App;

beforeAll(async () => {
  const stack = stackEnv();
  api = stack.urls.api!;
  alice = await signUp(stack.urls.auth!);
  client = sdkClient(api, alice);
  holds = holdClient(stack.env[HOLD_URL_ENV]);
  admin = initializeApp({ projectId: stack.env.GCLOUD_PROJECT }, `investigations-${Date.now()}`);
});

afterAll(async () => {
  if (admin) await deleteApp(admin);
});

type Ev = { id?: string; event: string; data: unknown };
type Custom = { type: string; [k: string]: unknown };

async function collect(stream: AsyncIterable<Ev>): Promise<Ev[]> {
  const out: Ev[] = [];
  for await (const ev of stream) out.push(ev);
  return out;
}

/**
 * A new thread of alice's holding the planted-cause table as its upload `uploads.sales` (the
 * stack's own datasets stay as other tests expect them).
 */
async function threadWithSales(): Promise<string> {
  const thread = crypto.randomUUID();
  const res = await call(api, `/threads/${thread}/files?name=sales.csv`, {
    method: "POST",
    token: alice.idToken,
    rawBody: readFileSync(RETAIL_SALES_CSV),
    headers: { "content-type": "text/csv" },
  });
  expect(res.status, res.text).toBe(201);
  return thread;
}

/** A PDF's text, page by page, lines joined as pdf.js reads them. */
async function pdfText(bytes: Uint8Array): Promise<string> {
  const { getDocument } = await import("pdfjs-dist/legacy/build/pdf.mjs");
  const doc = await getDocument({ data: bytes, useSystemFonts: false }).promise;
  const lines: string[] = [];
  for (let n = 1; n <= doc.numPages; n++) {
    const content = await (await doc.getPage(n)).getTextContent();
    let line = "";
    for (const item of content.items) {
      if (!("str" in item)) continue;
      line += item.str;
      if (item.hasEOL) {
        lines.push(line);
        line = "";
      }
    }
    if (line) lines.push(line);
  }
  await doc.cleanup();
  return lines.join("\n");
}

const customs = (events: Ev[]) => events.filter((e) => e.event === "custom").map((e) => e.data as Custom);

describe("an investigation through the API", () => {
  it("shows the plan, runs the edited plan in the background, and reports the planted cause from its cells", async () => {
    const thread = { thread_id: await threadWithSales() };
    const marker = `inv-${crypto.randomUUID().slice(0, 8)}`;
    const question = `Why did revenue fall in March 2025? [investigation:good] ${marker}`;
    const first = await collect(
      client.runs.stream(thread.thread_id, "quarry", {
        input: { messages: [{ type: "human", content: question }], investigate: true },
        streamMode: ["values", "custom"],
      }) as AsyncIterable<Ev>,
    );
    expect(first.some((e) => e.event === "error")).toBe(false);
    const last = first.filter((e) => e.event === "values").at(-1)?.data as {
      __interrupt__?: { value: PlanReview }[];
    };
    const review = last.__interrupt__![0].value;
    expect(review).toMatchObject({ kind: "investigation_plan", parallel: 3, budget: { maxSteps: 8 } });
    expect(review.plan.steps.map((s) => s.id)).toEqual([1, 2, 3, 4]);
    expect(customs(first).some((c) => c.type === "investigation_step")).toBe(false);
    expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");

    // The person drops step 3 and runs the rest as a background run.
    const run = await client.runs.create(thread.thread_id, "quarry", { command: { resume: "drop 3" } });
    const values = (await client.runs.join(thread.thread_id, run.run_id)) as {
      messages: {
        type: string;
        content: string;
        response_metadata?: { quarry_investigation?: InvestigationReport };
      }[];
    };
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe("success");
    const events = await collect(
      client.runs.joinStream(thread.thread_id, run.run_id, { streamMode: ["custom"] }) as AsyncIterable<Ev>,
    );
    const progress = customs(events).filter((c) => c.type === "investigation_step");
    expect(progress.map((c) => `${c.id}:${c.status}`).sort()).toEqual([
      "1:done",
      "1:running",
      "2:done",
      "2:running",
      "4:done",
      "4:running",
    ]);
    const results = customs(events).filter((c) => c.type === "result");
    expect(results.map((r) => r.ref).sort()).toEqual(
      progress
        .filter((p) => p.status === "done")
        .map((p) => p.ref)
        .sort(),
    );

    // The report is the turn's answer, kept with the conversation.
    const answer = values.messages.at(-1)!;
    const report = answer.response_metadata!.quarry_investigation!;
    expect(answer.content).toBe(report.markdown);
    expect(customs(events).find((c) => c.type === "investigation_report")?.report).toEqual(report);
    expect(report.writtenBy).toBe("model");

    // The planted segment is the contribution step's first row, and the report's figures are cells.
    const contribution = results.find((r) => r.ref === progress.find((p) => p.id === 2)!.ref)!;
    const top = (contribution.rows as Record<string, unknown>[])[0];
    expect({ region: top.region, channel: top.channel }).toEqual(PLANTED);
    const compare = (
      results.find((r) => r.ref === progress.find((p) => p.id === 1)!.ref)!.rows as {
        base_value: number;
        current_value: number;
      }[]
    )[0];
    const money = (n: unknown) =>
      Number(n).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
    expect(report.sections[0].text).toBe(
      `Revenue went from ${money(compare.base_value)} in February to ${money(compare.current_value)} in March.`,
    );
    expect(report.sections[1].text).toContain(`driven by marketplace in south: ${money(top.change)}`);

    // Every step went through the gate and is on the audit log.
    const audit = await getFirestore(admin)
      .collection("audit")
      .where("threadId", "==", thread.thread_id)
      .where("kind", "==", "query")
      .get();
    const sqls = audit.docs.map((d) => String(d.data().sql));
    expect(sqls).toHaveLength(3);
    expect(sqls.every((s) => s.includes(UPLOADED_TABLE))).toBe(true);

    // The export: the report as JSON, or as a Markdown download.
    const path = `/threads/${thread.thread_id}/investigation`;
    const asJson = await call(api, path, { token: alice.idToken });
    expect(asJson.json).toEqual(report);
    const asMarkdown = await call(api, `${path}?format=markdown`, { token: alice.idToken });
    expect(asMarkdown.headers.get("content-type")).toMatch(/^text\/markdown/);
    expect(asMarkdown.headers.get("content-disposition")).toBe("attachment; filename=investigation.md");
    expect(asMarkdown.text).toBe(report.markdown);
    // The PDF: the same report's text, and the rows of the steps it rests on (read back with pdf.js).
    const pdf = await fetch(`${api}${path}?format=pdf`, {
      headers: { authorization: `Bearer ${alice.idToken}` },
    });
    expect(pdf.headers.get("content-type")).toMatch(/^application\/pdf/);
    expect(pdf.headers.get("content-disposition")).toBe("attachment; filename=investigation.pdf");
    const bytes = new Uint8Array(await pdf.arrayBuffer());
    expect(Buffer.from(bytes.slice(0, 5)).toString()).toBe("%PDF-");
    // Lines wrap in a PDF: compared with spaces collapsed.
    const flat = (t: string) => t.replace(/\s+/g, " ");
    const text = flat(await pdfText(bytes));
    expect(text).toContain(report.title);
    for (const section of report.sections) expect(text).toContain(flat(section.text));
    expect(text).toContain(
      `region: ${PLANTED.region} · channel: ${PLANTED.channel} · base_value: ${money(top.base_value)}`,
    );

    // A follow-up continues from the report: the planner is shown it.
    await client.runs.wait(thread.thread_id, "quarry", {
      input: { messages: [{ type: "human", content: `How many orders were there? ${marker}-follow` }] },
    });
    const prompts = await holds.prompts(`${marker}-follow`);
    expect(prompts.some((p) => p.includes("Why revenue fell in March"))).toBe(true);
    // The report stays with the conversation after the next turn.
    expect((await call(api, path, { token: alice.idToken })).json).toEqual(report);
  });

  it("runs through MCP's ask: the plan as a question, answered on the same thread, then the report", async () => {
    const { token } = await makeToken(api, alice.idToken, "investigations");
    const mcp = await connectMcp(`${api}/mcp`, token);
    try {
      const ask = async (args: Record<string, unknown>) =>
        (await mcp.callTool({ name: "ask", arguments: args })) as ToolResult;
      const planned = await ask({
        question: "Why did revenue fall in March 2025? [investigation:good]",
        investigate: true,
        thread_id: await threadWithSales(),
      });
      const asked = planned.structuredContent as { status: string; answer: string; thread_id: string };
      expect(asked.status).toBe("asking");
      expect(asked.answer).toContain(`Investigation plan: ${PLANTED_PLAN.question}`);
      expect(asked.answer).toContain(`2. ${PLANTED_PLAN.steps[1].title} (contribution)`);
      expect(planned.content[0].text).toContain(`thread_id: "${asked.thread_id}"`);

      const reported = await ask({ question: "drop 3", thread_id: asked.thread_id });
      const done = reported.structuredContent as { status: string; answer: string; sql: string[] };
      expect(done.status).toBe("answered");
      expect(done.answer).toContain("# Why revenue fell in March");
      expect(done.answer).toContain("driven by marketplace in south");
      expect(done.sql).toHaveLength(3);
    } finally {
      await mcp.close();
    }
  });

  it("answers 404 for a thread without a report and 400 for an unknown export format", async () => {
    const thread = await client.threads.create();
    const path = `/threads/${thread.thread_id}/investigation`;
    const none = await call(api, path, { token: alice.idToken });
    expect(none.status).toBe(404);
    expect(JSON.stringify(none.json)).toContain("not_found:investigation");
    const docx = await call(api, `${path}?format=docx`, { token: alice.idToken });
    expect(docx.status).toBe(400);
    expect(JSON.stringify(docx.json)).toContain('format must be \\"json\\", \\"markdown\\" or \\"pdf\\"');
  });

  it("refuses an investigate flag that is not a boolean, saying what to send", async () => {
    const thread = await client.threads.create();
    const res = await call(api, `/threads/${thread.thread_id}/runs/stream`, {
      token: alice.idToken,
      method: "POST",
      body: {
        assistant_id: "quarry",
        input: { messages: [{ type: "human", content: "Why?" }], investigate: "yes" },
      },
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.json)).toContain("input.investigate must be true or false");
  });
});
