/**
 * The team's dbt project pushed through the API as a CI step would (`POST /admin/context/imports`,
 * the public jaffle-shop artifacts, gzip-compressed), reviewed and applied, and in the agent's
 * prompts on the running function within seconds — no redeploy. What the model stand-in was shown
 * is read back: the imported metric reaches a member whose group has the `jaffle` dataset and
 * never one whose group has only `shop`, and the answer that used it names it. Bad input is
 * refused naming the file, with nothing stored; a review of another push is a 409.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { Firestore } from "@google-cloud/firestore";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signUp, type TestUser } from "../../support/auth-emulator";
import { call, sdkClient } from "../../support/api-client";
import { holdClient, HOLD_URL_ENV, type Holds } from "../../support/hold-control";
import { importSeenEverywhere } from "../../support/imports-fresh";
import { JAFFLE, MAP } from "../../support/jaffle";
import { accessSeenEverywhere, seedAccess, until } from "../../support/seed-access";
import { stackEnv } from "../../support/stack-env";

let api: string;
let admin: TestUser;
let ann: TestUser;
let jo: TestUser;
let db: Firestore;
let holds: Holds;
const GROUPS = { "imports-shop": ["shop"], "imports-jaffle": ["jaffle"] };
const ID = "dbt-jaffle_shop";

/** The fixture's artifacts as the API's body has them: path → text. */
function artifacts(
  edit?: (semantic: { metrics: Record<string, unknown>[] }) => void,
): Record<string, string> {
  const read = (f: string) => readFileSync(path.join(JAFFLE, "target", f), "utf8");
  const semantic = JSON.parse(read("semantic_manifest.json"));
  edit?.(semantic);
  return {
    "target/manifest.json": read("manifest.json"),
    "target/semantic_manifest.json": JSON.stringify(semantic),
  };
}

/** Pushes a project as a CI step does: the JSON body gzip-compressed. */
function push(u: TestUser, body: Record<string, unknown>) {
  return call(api, "/admin/context/imports", {
    method: "POST",
    token: u.idToken,
    rawBody: gzipSync(JSON.stringify(body)),
    headers: { "content-type": "application/json", "content-encoding": "gzip" },
  });
}

const imports = async () =>
  (await call(api, "/admin/context/imports", { token: admin.idToken })).json as {
    imports: {
      id: string;
      active?: { metrics: number };
      pending?: { checksum: string; changes: { id: string }[] };
    }[];
  };

/** Asks in a new thread; returns the answer message's metadata. */
async function ask(u: TestUser, question: string) {
  const client = sdkClient(api, u);
  const thread = await client.threads.create();
  await client.runs.wait(thread.thread_id, "quarry", {
    input: { messages: [{ type: "human", content: question }] },
  });
  const state = await client.threads.getState(thread.thread_id);
  const messages = (
    state.values as { messages: { type: string; response_metadata?: Record<string, unknown> }[] }
  ).messages;
  return messages[messages.length - 1].response_metadata ?? {};
}

/** What the model was shown for a question carrying `marker`, without the question itself. */
async function promptsOf(marker: string): Promise<string> {
  const prompts = await holds.prompts(marker);
  expect(prompts.length, `no model request carried ${marker}`).toBeGreaterThan(0);
  return prompts.map((p) => p.split(marker).join("")).join("\n");
}

const QUESTION = "What is the order total? [definition:order total]";

beforeAll(async () => {
  const stack = stackEnv();
  api = stack.urls.api!;
  holds = holdClient(stack.env[HOLD_URL_ENV]);
  [admin, ann, jo] = await Promise.all([1, 2, 3].map(() => signUp(stack.urls.auth!)));
  db = new Firestore({
    projectId: stack.env.GCLOUD_PROJECT,
    host: stack.env.FIRESTORE_EMULATOR_HOST,
    ssl: false,
  });
  await db.collection("context_imports").doc(ID).delete();
  await seedAccess(db, GROUPS, [
    [admin, "admin", []],
    [ann, "member", ["imports-shop"]],
    [jo, "member", ["imports-jaffle"]],
  ]);
  await until(
    async () => (await call(api, "/me", { token: jo.idToken })).json as { scope?: { datasets: string[] } },
    (m) => m.scope?.datasets.join() === "jaffle",
  );
}, 120_000);

afterAll(async () => {
  if (!db) return;
  await db.collection("context_imports").doc(ID).delete();
  for (const name of Object.keys(GROUPS)) await db.collection("groups").doc(name).delete();
  const nobody = await signUp(stackEnv().urls.auth!);
  // Later files run with no groups: every instance's cache lets go of them, and one shows it.
  await accessSeenEverywhere();
  await until(
    async () =>
      (await call(api, "/me", { token: nobody.idToken })).json as { scope?: { datasets: string[] } },
    (m) => !!m.scope?.datasets.includes("shop"),
  );
  await db.terminate();
}, 60_000);

describe("imports pushed through the API", () => {
  it("is for admins only", async () => {
    const res = await push(jo, { source: "dbt", files: artifacts(), map: MAP });
    expect(res.status).toBe(403);
    expect(res.json).toMatchObject({ error: "forbidden:admin_only" });
    expect((await call(api, "/admin/context/imports", { token: jo.idToken })).status).toBe(403);
  });

  it("refuses bad input naming the file, and stores nothing", async () => {
    const truncated = artifacts();
    truncated["target/manifest.json"] = truncated["target/manifest.json"].slice(0, 4_000);
    const res = await push(admin, { source: "dbt", files: truncated, map: MAP });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ error: "bad_request:import" });
    expect(String(res.json.message)).toMatch(/^Not imported: target\/manifest\.json/);

    const unknown = artifacts();
    const manifest = JSON.parse(unknown["target/manifest.json"]);
    manifest.metadata.dbt_schema_version = "https://schemas.getdbt.com/dbt/manifest/v99.json";
    unknown["target/manifest.json"] = JSON.stringify(manifest);
    const res2 = await push(admin, { source: "dbt", files: unknown, map: MAP });
    expect(res2.status).toBe(400);
    expect(String(res2.json.message)).toMatch(/v99/);

    const escape = await push(admin, { source: "dbt", files: { "../manifest.json": "{}" } });
    expect(escape.status).toBe(400);
    expect(String(escape.json.message)).toMatch(/not a path inside the project/);
    expect((await imports()).imports.find((i) => i.id === ID)).toBeUndefined();
  });

  it("waits for review, then once applied reaches the prompts of those who may see it, and the answer names it", async () => {
    const pushed = await push(admin, { source: "dbt", files: artifacts(), map: MAP });
    expect(pushed.status).toBe(201);
    const pending = pushed.json.pending as { changes: { id: string }[]; metricsWithSql: number };
    expect(pushed.json.active).toBeUndefined();
    expect(pending.changes.map((c) => c.id)).toEqual(
      expect.arrayContaining(["table added:jaffle.orders", "metric added:order_total"]),
    );
    expect(pending.metricsWithSql).toBeGreaterThan(5);

    // Not applied: nothing of it in a prompt.
    const before = `[m-${randomUUID()}]`;
    await ask(admin, `${QUESTION} ${before}`);
    expect(await promptsOf(before)).not.toMatch(/order total[^\n]*Computed as/);

    const applied = await call(api, `/admin/context/imports/${ID}/apply`, {
      method: "POST",
      token: admin.idToken,
      body: {},
    });
    expect(applied.status).toBe(200);
    expect(applied.json).toMatchObject({ id: ID, applied: pending.changes.length });
    expect(applied.json.pending).toBeUndefined();

    // Jo's group has `jaffle`: the metric and its SQL reach the prompt (within the store's seconds),
    // the planner runs it, and the answer names the definition it used.
    let marker = "";
    const meta = await until(
      async () => {
        marker = `[m-${randomUUID()}]`;
        return ask(jo, `${QUESTION} ${marker}`);
      },
      (m) => Array.isArray(m.quarry_definitions),
    );
    expect(meta.quarry_definitions).toEqual([
      expect.objectContaining({ name: "order total", source: "dbt", approved: true }),
    ]);
    const seen = await promptsOf(marker);
    expect(seen).toMatch(/order total[^\n]*Computed as: SELECT/);
    expect(seen).toMatch(/jaffle\.orders/);

    // Ann's group has only `shop`: none of the import's notes, metrics or joins reach her. Asked once
    // every instance has the import, so that its absence is her scope and not an instance's old copy.
    await importSeenEverywhere(db, ID);
    const hers = `[m-${randomUUID()}]`;
    const annMeta = await ask(ann, `${QUESTION} ${hers}`);
    const annSaw = await promptsOf(hers);
    for (const word of ["jaffle", "Computed as", "order_total", "customer_id → jaffle"]) {
      expect(annSaw).not.toContain(word);
    }
    expect(annMeta.quarry_definitions).toBeUndefined();
  });

  it("a re-push lists what changed; one change applied alone leaves the rest to review; a stale review is a 409", async () => {
    const changed = artifacts((s) => {
      const large = s.metrics.find((m) => m.name === "large_orders") as {
        filter: { where_filters: { where_sql_template: string }[] };
        description?: string;
      };
      large.filter.where_filters[0].where_sql_template = "{{ Dimension('order_id__order_total_dim') }} >= 50";
      const total = s.metrics.find((m) => m.name === "order_total") as { description?: string };
      total.description = "The sum of all orders, tax included.";
    });
    const res = await push(admin, { source: "dbt", files: changed, map: MAP });
    expect(res.status).toBe(201);
    const pending = res.json.pending as { checksum: string; changes: { id: string; detail?: string }[] };
    expect(pending.changes.map((c) => c.id).sort()).toEqual([
      "metric changed:large_orders",
      "metric changed:order_total",
    ]);

    const stale = await call(api, `/admin/context/imports/${ID}/apply`, {
      method: "POST",
      token: admin.idToken,
      body: { checksum: "not-this-one", changes: ["metric changed:large_orders"] },
    });
    expect(stale.status).toBe(409);
    expect(stale.json).toMatchObject({ error: "conflict:import" });

    const one = await call(api, `/admin/context/imports/${ID}/apply`, {
      method: "POST",
      token: admin.idToken,
      body: { checksum: pending.checksum, changes: ["metric changed:large_orders"] },
    });
    expect(one.status).toBe(200);
    expect(one.json).toMatchObject({ applied: 1 });
    expect((one.json.pending as { changes: { id: string }[] }).changes.map((c) => c.id)).toEqual([
      "metric changed:order_total",
    ]);

    const dismissed = await call(api, `/admin/context/imports/${ID}/pending`, {
      method: "DELETE",
      token: admin.idToken,
    });
    expect(dismissed.status).toBe(204);
    const now = (await imports()).imports.find((i) => i.id === ID)!;
    expect(now.pending).toBeUndefined();
    expect(now.active?.metrics).toBeGreaterThan(5);

    // The audit log has each step, under the admin's email.
    const audit = (
      await call(api, `/admin/audit?person=${encodeURIComponent(admin.email)}&limit=50`, {
        token: admin.idToken,
      })
    ).json as { entries: { action?: string; target?: string }[] };
    const actions = audit.entries.filter((e) => e.target === ID).map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(["import.push", "import.apply", "import.dismiss"]));
  });
});
