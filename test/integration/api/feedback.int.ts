/**
 * Feedback through the functions emulator with the official SDK: a vote on one's own answer is
 * stored server-side; an up-vote on an answer that ran SQL becomes a proposal, which reaches the
 * context file only when approved (and only if the file still validates with it).
 */
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { copyFileSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Firestore } from "@google-cloud/firestore";
import type { Client } from "@langchain/langgraph-sdk";
import { approveProposal, listProposals, rejectProposal } from "../../../functions/src/context/proposals";
import { parseContextFile } from "../../../functions/src/context";
import { closeWarehouses, getWarehouse } from "../../../functions/src/tools";
import { readConfig } from "../../../functions/src/config";
import { signUp, type TestUser } from "../../support/auth-emulator";
import { call, sdkClient } from "../../support/api-client";
import { stackEnv } from "../../support/stack-env";

let api: string;
let alice: TestUser;
let bob: TestUser;
let client: Client;
let db: Firestore;
const QUESTION = "How many orders were placed in total?";

beforeAll(async () => {
  const stack = stackEnv();
  api = stack.urls.api!;
  alice = await signUp(stack.urls.auth!);
  bob = await signUp(stack.urls.auth!);
  client = sdkClient(api, alice);
  db = new Firestore({
    projectId: stack.env.GCLOUD_PROJECT,
    host: stack.env.FIRESTORE_EMULATOR_HOST,
    ssl: false,
  });
});
afterAll(async () => {
  await db?.terminate();
  await closeWarehouses();
});

/** A thread with one answered question; returns the thread and the question's message id. */
async function answered(question = QUESTION) {
  const thread = await client.threads.create();
  for await (const _ of client.runs.stream(thread.thread_id, "quarry", {
    input: { messages: [{ type: "human", content: question }] },
    streamMode: ["values"],
  }));
  const state = await client.threads.getState(thread.thread_id);
  const messages = (state.values as { messages: { type: string; id: string }[] }).messages;
  return { threadId: thread.thread_id, questionId: messages.find((m) => m.type === "human")!.id };
}

const vote = (user: TestUser, threadId: string, body: unknown) =>
  call(api, `/threads/${threadId}/feedback`, { method: "POST", token: user.idToken, body });

describe("feedback on answers", () => {
  it("stores a vote on one's own answer; an up-vote with SQL becomes a proposal", async () => {
    const { threadId, questionId } = await answered();
    const up = await vote(alice, threadId, { question_id: questionId, score: 1, note: "exactly right" });
    expect(up.status).toBe(201);
    expect(up.json).toMatchObject({ status: "proposed" });
    const doc = (await db.collection("feedback").doc(String(up.json.feedback_id)).get()).data()!;
    expect(doc).toMatchObject({
      uid: alice.uid,
      threadId,
      questionId,
      score: 1,
      note: "exactly right",
      question: QUESTION,
      sql: "SELECT COUNT(*) AS orders FROM shop.orders",
      status: "proposed",
    });
    // Voting again replaces the vote (one per answer and person): a down-vote is no proposal.
    const down = await vote(alice, threadId, { question_id: questionId, score: -1 });
    expect(down.json).toEqual({ feedback_id: up.json.feedback_id, status: "recorded" });
    expect((await db.collection("feedback").doc(String(up.json.feedback_id)).get()).get("status")).toBe(
      "recorded",
    );
  });

  it("refuses other people's threads, unknown questions and bad votes, saying what to fix", async () => {
    const { threadId, questionId } = await answered("hello");
    expect((await vote(bob, threadId, { question_id: questionId, score: 1 })).status).toBe(404);
    const unknown = await vote(alice, threadId, { question_id: "nope", score: 1 });
    expect(unknown.status).toBe(404);
    expect(unknown.json).toMatchObject({
      error: "not_found:message",
      message: expect.stringMatching(/No answered question nope/),
    });
    const bad = await vote(alice, threadId, { question_id: questionId, score: 5 });
    expect(bad.status).toBe(400);
    expect(bad.json.message).toMatch(/score/);
    // A greeting ran no SQL: an up-vote is recorded, not proposed.
    expect((await vote(alice, threadId, { question_id: questionId, score: 1 })).json).toMatchObject({
      status: "recorded",
    });
  });

  it("a proposal reaches the context file only when approved, and only if the file still validates", async () => {
    const { threadId, questionId } = await answered();
    const { feedback_id: id } = (await vote(alice, threadId, { question_id: questionId, score: 1 })).json as {
      feedback_id: string;
    };
    expect((await listProposals(db)).map((p) => p.id)).toContain(id);
    const dir = mkdtempSync(path.join(tmpdir(), "quarry-fb-"));
    const file = path.join(dir, "shop.yaml");
    copyFileSync(path.resolve(__dirname, "../../../functions/context/shop.yaml"), file);
    const before = parseContextFile(readFileSync(file, "utf8"), file).context.verified_queries.length;
    const warehouse = await getWarehouse(readConfig({ GOOGLE_CLOUD_PROJECT: "p" }).warehouse);
    await approveProposal({ db, id, file, warehouse, question: "How many orders have been placed?" });
    const after = parseContextFile(readFileSync(file, "utf8"), file).context.verified_queries;
    expect(after).toHaveLength(before + 1);
    expect(after.at(-1)).toEqual({
      question: "How many orders have been placed?",
      sql: "SELECT COUNT(*) AS orders FROM shop.orders",
    });
    expect(readFileSync(file, "utf8")).toContain("# Quarry's authored context"); // comments kept
    expect((await db.collection("feedback").doc(id).get()).get("status")).toBe("approved");
    await expect(approveProposal({ db, id, file, warehouse })).rejects.toThrow(/is approved, not a proposal/);

    // A proposal whose SQL no longer passes the dry run changes nothing.
    await db
      .collection("feedback")
      .doc("broken")
      .set({ status: "proposed", question: "q", sql: "SELECT nope FROM shop.orders" });
    const text = readFileSync(file, "utf8");
    await expect(approveProposal({ db, id: "broken", file, warehouse })).rejects.toThrow(
      /would not validate.*dry run/s,
    );
    expect(readFileSync(file, "utf8")).toBe(text);
    await rejectProposal(db, "broken");
    expect((await db.collection("feedback").doc("broken").get()).get("status")).toBe("rejected");
  });
});
