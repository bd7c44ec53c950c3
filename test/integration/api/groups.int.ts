/**
 * Groups in the admin API through the functions emulator (and this process's own instance of the
 * app, to read a scope decision right after a change): create, list with their members, change,
 * delete (which takes the group off its members); names, datasets and members' groups are
 * validated, each refusal naming what exists; every change is on the audit log; and the scope the
 * gate decides follows the rules (no group: everyone sees everything; once one exists a member in
 * none sees nothing; admins see everything).
 *
 * Groups are global to the stack: any group left behind would take every group-less member's data
 * away in the files that run after this one. Every group made here is deleted in `afterAll`
 * through the emulated function, whose instance then forgets its cache.
 */
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { Firestore } from "@google-cloud/firestore";
import type { Group, GroupsAnswer, Member, MembersAnswer } from "../../../functions/src/contract";
import { MEMBER_DOMAIN, signUp, type TestUser } from "../../support/auth-emulator";
import { call } from "../../support/api-client";
import { startInProcessApp, type InProcessApp } from "../../support/in-process-app";
import { accessSeenEverywhere, until } from "../../support/seed-access";
import { stackEnv } from "../../support/stack-env";

let api: string;
let app: InProcessApp;
let admin: TestUser;
let db: Firestore;
let seq = 0;
/** An address of the members' domain nobody signed up with: a members-list entry to put in groups. */
const someone = () => `grouped${Date.now()}-${seq++}@${MEMBER_DOMAIN}`;

beforeAll(async () => {
  const stack = stackEnv();
  api = stack.urls.api!;
  db = new Firestore({
    projectId: stack.env.GCLOUD_PROJECT,
    host: stack.env.FIRESTORE_EMULATOR_HOST,
    ssl: false,
  });
  // This file's own admin (a members-list entry with the admin role, written as the function
  // writes one, before the account exists so no cache holds it without), so its audit entries are
  // told apart from the other files' by person.
  const email = someone();
  const now = new Date().toISOString();
  await db
    .collection("members")
    .doc(email)
    .set({ email, role: "admin", addedBy: "groups.int.ts", addedAt: now, updatedAt: now });
  admin = await signUp(stack.urls.auth!, email);
  app = await startInProcessApp();
  // The rules below start from "no group defined"; another file leaving one would make them lie.
  expect((await db.collection("groups").get()).docs.map((d) => d.id)).toEqual([]);
});

afterAll(async () => {
  if (admin && api) {
    for (const g of (await listGroups()).groups) {
      await call(api, `/admin/groups/${g.name}`, { method: "DELETE", token: admin.idToken });
    }
    expect((await listGroups()).groups).toEqual([]);
    // Later files run with no groups: every instance's cache lets go of them, and one shows it.
    await accessSeenEverywhere();
    const plain = await signUp(stackEnv().urls.auth!);
    await until(
      async () =>
        ((await call(api, "/me", { token: plain.idToken })).json as { scope?: { datasets: string[] } }).scope
          ?.datasets ?? [],
      (d) => d.includes("shop") && d.includes("finance"),
    );
  }
  await app?.close();
  await db?.terminate();
}, 60_000);

const send = (method: string, path: string, body?: unknown, base = api) =>
  call(base, path, { method, token: admin.idToken, ...(body !== undefined ? { body } : {}) });
const listGroups = async () => (await send("GET", "/admin/groups")).json as unknown as GroupsAnswer;
const listMembers = async () => (await send("GET", "/admin/members")).json as unknown as MembersAnswer;

/** The admin actions this file's admin did to `targets`, newest first, as `action target`. */
async function auditOf(...targets: string[]): Promise<string[]> {
  const res = await send("GET", `/admin/audit?person=${encodeURIComponent(admin.email)}&limit=200`);
  return (res.json as { entries: { action?: string; target?: string }[] }).entries
    .filter((e) => targets.includes(e.target ?? ""))
    .map((e) => `${e.action} ${e.target}`);
}

describe("the scope decided from groups", () => {
  it("no group: members see everything; once one exists a member in none sees nothing, its members its datasets, admins everything — on the instance that made the change at once", async () => {
    const { resolveAccess } = await import("../../../functions/src/access/gate");
    const member = { uid: "u-member", email: someone(), emailVerified: true };
    const adminId = { uid: admin.uid, email: admin.email, emailVerified: true };
    expect((await resolveAccess(member)).scope).toMatchObject({ all: true });
    const made = await send(
      "POST",
      "/admin/groups",
      { name: "Sales", datasets: ["shop.orders", " SHOP.Customers ", "shop.orders"] },
      app.url,
    );
    expect(made.status).toBe(201);
    expect(made.json).toMatchObject({
      name: "sales",
      datasets: ["shop.customers", "shop.orders"],
      members: [],
      createdBy: admin.email,
    } satisfies Partial<Group>);
    // No wait: this instance forgot its cache when it made the change.
    expect((await resolveAccess(member)).scope).toMatchObject({ all: false, entries: [] });
    expect((await resolveAccess(adminId)).scope).toMatchObject({ all: true });
    const added = await send("POST", "/admin/members", { email: member.email, groups: ["SALES"] }, app.url);
    expect([added.status, (added.json as unknown as Member).groups]).toEqual([201, ["sales"]]);
    expect((await resolveAccess(member)).scope).toMatchObject({
      all: false,
      entries: ["shop.customers", "shop.orders"],
    });
    const widened = await send("PATCH", "/admin/groups/sales", { datasets: ["shop"] }, app.url);
    expect(widened.json).toMatchObject({ datasets: ["shop"], members: [member.email] });
    expect((await resolveAccess(member)).scope).toMatchObject({ entries: ["shop"] });
    expect((await send("DELETE", "/admin/groups/sales", undefined, app.url)).status).toBe(204);
    // The last group gone: back to everyone seeing every allowed dataset.
    expect((await resolveAccess(member)).scope).toMatchObject({ all: true });
  });
});

describe("groups in the admin API", () => {
  it("lists each group with its members, shows members' groups, and deleting a group takes it off them; every change audited", async () => {
    const [ann, bob] = [someone(), someone()];
    expect(
      (await send("POST", "/admin/groups", { name: "analysts", datasets: ["shop", "finance.salaries"] }))
        .status,
    ).toBe(201);
    expect(
      (await send("POST", "/admin/groups", { name: "web-team", datasets: ["shop.web_events"] })).status,
    ).toBe(201);
    expect(
      (await send("POST", "/admin/members", { email: ann, groups: ["web-team", "analysts"] })).status,
    ).toBe(201);
    expect((await send("POST", "/admin/members", { email: bob })).status).toBe(201);
    const patched = await send("PATCH", `/admin/members/${bob}`, { groups: ["analysts"] });
    expect([patched.status, (patched.json as unknown as Member).groups]).toEqual([200, ["analysts"]]);
    expect(
      (await send("PATCH", "/admin/groups/web-team", { datasets: ["shop.web_events", "shop.orders"] })).json,
    ).toMatchObject({ datasets: ["shop.orders", "shop.web_events"], members: [ann] });

    const groups = (await listGroups()).groups;
    expect(groups.map((g) => [g.name, g.datasets, g.members])).toEqual([
      ["analysts", ["finance.salaries", "shop"], [ann, bob].sort()],
      ["web-team", ["shop.orders", "shop.web_events"], [ann]],
    ]);
    const members = await listMembers();
    expect(members.groups).toEqual(["analysts", "web-team"]);
    const groupsOf = (m: MembersAnswer, email: string) => m.members.find((x) => x.email === email)?.groups;
    expect([groupsOf(members, ann), groupsOf(members, bob)]).toEqual([
      ["analysts", "web-team"],
      ["analysts"],
    ]);
    // Someone on the list in no group is listed with none, not without the field.
    expect(members.members.find((m) => m.email === admin.email)?.groups).toEqual([]);

    expect((await send("DELETE", "/admin/groups/analysts")).status).toBe(204);
    const after = await listMembers();
    expect([groupsOf(after, ann), groupsOf(after, bob)]).toEqual([["web-team"], []]);
    expect(after.groups).toEqual(["web-team"]);
    // Nothing dangles in storage either.
    expect((await db.collection("members").where("groups", "array-contains", "analysts").get()).size).toBe(0);
    expect((await db.collection("groups").doc("analysts").get()).exists).toBe(false);
    expect((await listGroups()).groups.map((g) => g.name)).toEqual(["web-team"]);
    // Taking a member out of every group.
    expect(
      ((await send("PATCH", `/admin/members/${ann}`, { groups: [] })).json as unknown as Member).groups,
    ).toEqual([]);
    expect((await send("DELETE", "/admin/groups/web-team")).status).toBe(204);

    expect(await auditOf("analysts", "web-team", ann, bob)).toEqual([
      "group.delete web-team",
      `member.update ${ann}`,
      "group.delete analysts",
      "group.update web-team",
      `member.update ${bob}`,
      `member.add ${bob}`,
      `member.add ${ann}`,
      "group.create web-team",
      "group.create analysts",
    ]);
    const audit = await send("GET", `/admin/audit?person=${encodeURIComponent(admin.email)}&limit=200`);
    const entries = (audit.json as { entries: { action?: string; target?: string; detail?: unknown }[] })
      .entries;
    expect(entries.find((e) => e.action === "group.delete" && e.target === "analysts")?.detail).toEqual({
      members: [ann, bob].sort(),
    });
    expect(entries.find((e) => e.action === "group.update" && e.target === "web-team")?.detail).toEqual({
      datasets: ["shop.orders", "shop.web_events"],
    });
    expect(entries.find((e) => e.action === "member.update" && e.target === bob)?.detail).toEqual({
      groups: ["analysts"],
    });
  });

  it("refuses a bad name, an unknown dataset, a duplicate and a missing group, saying what is allowed or what exists", async () => {
    for (const name of ["two words", "-lead", "ünïcode", "x".repeat(41), ""]) {
      const res = await send("POST", "/admin/groups", { name, datasets: ["shop"] });
      expect([name, res.status, res.json?.error]).toEqual([name, 400, "bad_request:body"]);
      expect(String(res.json?.message)).toContain("1–40 characters: letters, digits, - and _");
    }
    const unknown = await send("POST", "/admin/groups", {
      name: "hr",
      datasets: ["shop", "hr", "finance.salaries", "shop.nope"],
    });
    expect([unknown.status, unknown.json?.error]).toEqual([400, "bad_request:body"]);
    // The stack's warehouse: the sample `shop`, the file table `finance.salaries` and the dbt fixture's `jaffle`.
    expect(unknown.json?.message).toBe(
      "Invalid body: datasets: the warehouse has no dataset or table hr, shop.nope. " +
        "Its datasets: finance, jaffle, shop (or one table of one, as dataset.table).",
    );
    const empty = await send("POST", "/admin/groups", { name: "hr", datasets: [] });
    expect([empty.status, String(empty.json?.message)]).toEqual([
      400,
      expect.stringContaining("at least one"),
    ]);
    const extra = await send("POST", "/admin/groups", { name: "hr", datasets: ["shop"], members: [] });
    expect([extra.status, String(extra.json?.message)]).toEqual([400, expect.stringContaining('"members"')]);
    // None of these made a group.
    expect((await db.collection("groups").doc("hr").get()).exists).toBe(false);

    expect((await send("POST", "/admin/groups", { name: "ops", datasets: ["shop.orders"] })).status).toBe(
      201,
    );
    const twice = await send("POST", "/admin/groups", { name: "OPS", datasets: ["shop"] });
    expect([twice.status, twice.json?.error]).toEqual([409, "conflict:group"]);
    expect((await db.collection("groups").doc("ops").get()).get("datasets")).toEqual(["shop.orders"]);
    const badPatch = await send("PATCH", "/admin/groups/ops", { datasets: ["shop.nope"] });
    expect([badPatch.status, String(badPatch.json?.message)]).toEqual([
      400,
      expect.stringContaining("shop.nope"),
    ]);

    const missing = await send("PATCH", "/admin/groups/nobody", { datasets: ["shop"] });
    expect([missing.status, missing.json?.error]).toEqual([404, "not_found:group"]);
    expect((await db.collection("groups").doc("nobody").get()).exists).toBe(false);
    const gone = await send("DELETE", "/admin/groups/nobody");
    expect([gone.status, gone.json?.error]).toEqual([404, "not_found:group"]);
    const badPath = await send("DELETE", "/admin/groups/not%20a%20slug");
    expect([badPath.status, badPath.json?.error]).toEqual([400, "bad_request:params"]);

    const person = someone();
    const newcomer = await send("POST", "/admin/members", { email: person, groups: ["ops", "nobody"] });
    expect([newcomer.status, newcomer.json?.error]).toEqual([400, "bad_request:body"]);
    expect(String(newcomer.json?.message)).toBe(
      "Invalid body: groups: there is no group nobody. The groups: ops.",
    );
    expect((await db.collection("members").doc(person).get()).exists).toBe(false);
    expect((await send("POST", "/admin/members", { email: person })).status).toBe(201);
    const patch = await send("PATCH", `/admin/members/${person}`, { groups: ["nobody"] });
    expect([patch.status, String(patch.json?.message)]).toEqual([
      400,
      expect.stringContaining("The groups: ops."),
    ]);
    expect((await db.collection("members").doc(person).get()).get("groups")).toBeUndefined();
    expect((await send("DELETE", "/admin/groups/ops")).status).toBe(204);
    // No group left: the refusal says so.
    const none = await send("PATCH", `/admin/members/${person}`, { groups: ["ops"] });
    expect(String(none.json?.message)).toContain("No group is defined yet");
    // Refusals change nothing, so the audit log holds only what was done.
    expect(await auditOf("hr", "ops", "nobody", person)).toEqual([
      "group.delete ops",
      `member.add ${person}`,
      "group.create ops",
    ]);
  });

  it("is for admins only", async () => {
    const member = await signUp(stackEnv().urls.auth!);
    for (const [method, path] of [
      ["GET", "/admin/groups"],
      ["POST", "/admin/groups"],
      ["PATCH", "/admin/groups/x"],
      ["DELETE", "/admin/groups/x"],
    ] as const) {
      const res = await call(api, path, {
        method,
        token: member.idToken,
        ...(method === "GET" ? {} : { body: { name: "x", datasets: ["shop"] } }),
      });
      expect([path, method, res.status, res.json?.error]).toEqual([
        path,
        method,
        403,
        "forbidden:admin_only",
      ]);
    }
  });
});
