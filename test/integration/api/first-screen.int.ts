/**
 * What an empty conversation offers, through the functions emulator: `GET /first-screen` answers
 * the context file's starter questions (`starter: true` in functions/context/shop.yaml) and the
 * datasets with their tables; without starters, the team's most asked questions — only ones at
 * least two people asked, so no one's private question is shown to others.
 */
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { readFileSync } from "node:fs";
import path from "node:path";
import { FieldValue, Firestore, Timestamp } from "@google-cloud/firestore";
import type { FirstScreen } from "../../../functions/src/contract";
import { KnowledgeBase, parseContextFile } from "../../../functions/src/context";
import { ThreadStore } from "../../../functions/src/runs/thread-store";
import { FULL_SCOPE, limitedScope, type Scope } from "../../../functions/src/tools/scope";
import { signUp, type TestUser } from "../../support/auth-emulator";
import { call } from "../../support/api-client";
import { stackEnv } from "../../support/stack-env";

let api: string;
let alice: TestUser;
let db: Firestore;

beforeAll(async () => {
  const stack = stackEnv();
  api = stack.urls.api!;
  alice = await signUp(stack.urls.auth!);
  db = new Firestore({
    projectId: stack.env.GCLOUD_PROJECT,
    host: stack.env.FIRESTORE_EMULATOR_HOST,
    ssl: false,
  });
});
afterAll(async () => {
  await db?.terminate();
});

describe("the first screen", () => {
  it("offers the context file's starters and the datasets with their tables", async () => {
    const file = path.resolve(__dirname, "../../../functions/context/shop.yaml");
    const starters = new KnowledgeBase([
      parseContextFile(readFileSync(file, "utf8"), file).context,
    ]).starters();
    const res = await call(api, "/first-screen", { token: alice.idToken });
    expect(res.status).toBe(200);
    const body = res.json as unknown as FirstScreen;
    expect(body.startersFrom).toBe("context");
    expect(body.starters).toEqual(starters);
    const shop = body.datasets.find((d) => d.name === "shop");
    expect(shop?.tables).toEqual(expect.arrayContaining(["customers", "order_items", "orders", "products"]));
  });

  it("without starters: the questions most people asked, never one person's alone", async () => {
    const collection = `first-screen-${Date.now()}`;
    const store = new ThreadStore(db as never, collection, FieldValue as never, Timestamp as never);
    const asked: [string, string][] = [
      ["u1", "Top 10 products by revenue"],
      ["u2", "Top 10 products by revenue"],
      ["u3", "top 10 products by revenue?"],
      ["u1", "Revenue by month in 2025"],
      ["u2", "Revenue by month in 2025"],
      ["u1", "Salary of my manager"],
      ["u1", "Salary of my manager"],
    ];
    for (const [i, [owner, title]] of asked.entries()) {
      await store.create(`t${i}`, owner, { title }, "raise");
    }
    await expect(
      store.popularQuestions({ sample: 100, minPeople: 2, limit: 6, scope: FULL_SCOPE }),
    ).resolves.toEqual(["Top 10 products by revenue", "Revenue by month in 2025"]);
  });

  it("offers a team question only to people who see all of the scope it was asked in", async () => {
    const collection = `first-screen-scoped-${Date.now()}`;
    const store = new ThreadStore(db as never, collection, FieldValue as never, Timestamp as never);
    const asked: [string, string, string][] = [
      ["u1", "Average salary by grade", limitedScope(["finance"]).key],
      ["u2", "Average salary by grade", limitedScope(["finance", "shop"]).key],
      ["u3", "Orders by month", limitedScope(["shop"]).key],
      ["u4", "Orders by month", limitedScope(["shop"]).key],
    ];
    for (const [i, [owner, title, scopeKey]] of asked.entries()) {
      await store.create(`s${i}`, owner, { title }, "raise");
      await db.collection(collection).doc(`s${i}`).update({ scopeKey });
    }
    const popular = (scope: Scope) => store.popularQuestions({ sample: 100, minPeople: 2, limit: 6, scope });
    await expect(popular(limitedScope(["shop"]))).resolves.toEqual(["Orders by month"]);
    expect((await popular(limitedScope(["shop", "finance"]))).sort()).toEqual([
      "Average salary by grade",
      "Orders by month",
    ]);
    // u1 asked in finance alone: to a person who sees only finance.salaries it is one person's question.
    await expect(popular(limitedScope(["finance.salaries"]))).resolves.toEqual([]);
  });
});
