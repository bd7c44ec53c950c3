/**
 * Files as tables through the API (`/threads/:id/files`), on the local stack (DuckDB): a CSV of
 * monthly targets becomes `uploads.targets` of one conversation, a question joins it with the
 * warehouse (the rows equal our own DuckDB join of the same data), and it is that conversation's
 * only: another person and the owner's other thread cannot see it or name it in SQL, and deleting
 * the file or the thread removes the table. Refusals name what to fix and keep nothing.
 */
import { existsSync } from "node:fs";
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { deleteApp, initializeApp, type App } from "firebase-admin/app";
import { getFirestore } from "firebase-admin/firestore";
import type { Client } from "@langchain/langgraph-sdk";
import { signUp, type TestUser } from "../../support/auth-emulator";
import { call, sdkClient } from "../../support/api-client";
import { stackEnv } from "../../support/stack-env";
import { ownJoin, TARGETS_CSV } from "../../support/uploads";

let api: string;
let alice: TestUser;
let bob: TestUser;
let client: Client;
let admin: App;

beforeAll(async () => {
  const stack = stackEnv();
  api = stack.urls.api!;
  [alice, bob] = await Promise.all([signUp(stack.urls.auth!), signUp(stack.urls.auth!)]);
  client = sdkClient(api, alice);
  admin = initializeApp({ projectId: stack.env.GCLOUD_PROJECT }, `files-${Date.now()}`);
});

afterAll(async () => {
  if (admin) await deleteApp(admin);
});

type Msg = { type: string; content: unknown; artifact?: { kind: string; result?: { rows: unknown[] } } };

const upload = (thread: string, name: string, body: string | Uint8Array, user = alice, type = "text/csv") =>
  call(api, `/threads/${thread}/files?name=${encodeURIComponent(name)}`, {
    method: "POST",
    token: user.idToken,
    rawBody: body,
    headers: { "content-type": type },
  });

async function locationOf(thread: string, name: string): Promise<string | undefined> {
  const doc = await getFirestore(admin).collection("threads").doc(thread).get();
  return (doc.data()?.uploads as Record<string, { location: string }> | undefined)?.[name]?.location;
}

async function ask(thread: string, question: string): Promise<Msg[]> {
  const values = (await client.runs.wait(thread, "quarry", {
    input: { messages: [{ type: "human", content: question }] },
  })) as { messages: Msg[] };
  return values.messages;
}

const toolResults = (messages: Msg[]) => messages.filter((m) => m.type === "tool");

describe("files as tables", () => {
  it("a CSV becomes uploads.<name> of the conversation, and a question joins it with the warehouse", async () => {
    const thread = crypto.randomUUID();
    const res = await upload(thread, "targets.csv", TARGETS_CSV);
    expect(res.status, res.text).toBe(201);
    const file = (res.json as { file: Record<string, unknown> }).file;
    expect(file).toMatchObject({ name: "targets", table: "uploads.targets", format: "csv", rows: 12 });
    expect(file.columns).toEqual([
      { name: "month", type: "VARCHAR" },
      { name: "target", type: "BIGINT" },
    ]);
    expect((file.preview as unknown[]).length).toBe(5);
    const listed = await call(api, `/threads/${thread}/files`, { token: alice.idToken });
    expect((listed.json as { files: { name: string }[] }).files.map((f) => f.name)).toEqual(["targets"]);

    const messages = await ask(thread, "What was revenue against target by month in 2025?");
    const query = toolResults(messages).find((m) => m.artifact?.kind === "query");
    expect(query, JSON.stringify(messages.map((m) => m.content))).toBeDefined();
    expect(query!.artifact!.result!.rows).toEqual(await ownJoin(TARGETS_CSV));
  });

  it("another person, and the owner's other thread, cannot see or query it", async () => {
    const thread = crypto.randomUUID();
    expect((await upload(thread, "targets.csv", TARGETS_CSV)).status).toBe(201);
    // Another person: the thread is not theirs (it looks like one that does not exist).
    expect((await upload(thread, "more.csv", TARGETS_CSV, bob)).status).toBe(404);
    expect((await call(api, `/threads/${thread}/files`, { token: bob.idToken })).status).toBe(404);
    const del = await call(api, `/threads/${thread}/files/targets`, { method: "DELETE", token: bob.idToken });
    expect(del.status).toBe(404);
    // The owner's other thread, and another person's thread, naming the table in SQL: refused by the gate.
    for (const [who, c] of [
      ["alice", client],
      ["bob", sdkClient(api, bob)],
    ] as const) {
      const other = await c.threads.create();
      const values = (await c.runs.wait(other.thread_id, "quarry", {
        input: { messages: [{ type: "human", content: "[sql:upload-targets] show the targets" }] },
      })) as { messages: Msg[] };
      const tool = toolResults(values.messages)[0];
      expect(JSON.stringify(tool.content), who).toMatch(/not (available|found)|does not exist/i);
      expect(tool.artifact?.kind, who).toBe("error");
    }
    expect(await locationOf(thread, "targets")).toBeDefined();
  });

  it("refuses what it cannot keep, naming what to fix, and keeps nothing", async () => {
    const thread = crypto.randomUUID();
    const ragged = "month,target\n2025-01,100\n2025-02,200,7\n";
    const bad = await upload(thread, "ragged.csv", ragged);
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ error: "bad_request:upload" });
    expect(String(bad.json.message)).toMatch(/line 3/i);
    const noName = await call(api, `/threads/${thread}/files`, {
      method: "POST",
      token: alice.idToken,
      rawBody: TARGETS_CSV,
      headers: { "content-type": "text/csv" },
    });
    expect(noName.json).toMatchObject({ error: "bad_request:upload" });
    expect((await upload(thread, "targets.csv", TARGETS_CSV)).status).toBe(201);
    const again = await upload(thread, "targets.csv", TARGETS_CSV);
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({ error: "conflict:upload" });
    const files = await call(api, `/threads/${thread}/files`, { token: alice.idToken });
    expect((files.json as { files: unknown[] }).files).toHaveLength(1);
  });

  it("deleting the file, or the thread, removes the table", async () => {
    const thread = crypto.randomUUID();
    expect((await upload(thread, "targets.csv", TARGETS_CSV)).status).toBe(201);
    const where = await locationOf(thread, "targets");
    expect(where && existsSync(where)).toBe(true);
    const del = await call(api, `/threads/${thread}/files/targets`, {
      method: "DELETE",
      token: alice.idToken,
    });
    expect(del.status).toBe(204);
    expect(existsSync(where!)).toBe(false);
    expect(await locationOf(thread, "targets")).toBeUndefined();
    const gone = await call(api, `/threads/${thread}/files/targets`, {
      method: "DELETE",
      token: alice.idToken,
    });
    expect(gone.json).toMatchObject({ error: "not_found:upload" });

    expect((await upload(thread, "targets.csv", TARGETS_CSV)).status).toBe(201);
    const second = await locationOf(thread, "targets");
    expect(second && existsSync(second)).toBe(true);
    expect((await call(api, `/threads/${thread}`, { method: "DELETE", token: alice.idToken })).status).toBe(
      204,
    );
    expect(existsSync(second!)).toBe(false);
    const records = await getFirestore(admin).collection("threads").doc(thread).collection("files").get();
    expect(records.size).toBe(0);
  });

  it("an upload is on the audit log and counts against the day's bytes", async () => {
    const carol = await signUp(stackEnv().urls.auth!);
    const before = await call(api, "/me", { token: carol.idToken });
    const used = (before.json as { quotas: { bytesPerDay: { used: number } } }).quotas.bytesPerDay.used;
    const thread = crypto.randomUUID();
    expect((await upload(thread, "targets.csv", TARGETS_CSV, carol)).status).toBe(201);
    const after = await call(api, "/me", { token: carol.idToken });
    expect((after.json as { quotas: { bytesPerDay: { used: number } } }).quotas.bytesPerDay.used).toBe(
      used + Buffer.byteLength(TARGETS_CSV),
    );
    const entries = await getFirestore(admin)
      .collection("audit")
      .where("uid", "==", carol.uid)
      .where("kind", "==", "upload")
      .get();
    expect(entries.docs.map((d) => d.data())).toEqual([
      expect.objectContaining({
        threadId: thread,
        file: "targets.csv",
        table: "uploads.targets",
        rows: 12,
        bytes: Buffer.byteLength(TARGETS_CSV),
        outcome: "ok",
      }),
    ]);
  });
});
