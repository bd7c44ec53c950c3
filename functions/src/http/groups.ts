/**
 * Groups in the admin API (`/admin/groups`, behind `requireAdmin`): a name and the datasets
 * (`shop`) or single tables (`finance.salaries`) its members may see. Each entry is checked
 * against the warehouse's own table list, so a group never names data that is not there; deleting
 * a group takes it off its members in the same transaction. Every change is on the audit log and
 * reaches this instance's scope decisions at once (the cache is invalidated), others within the
 * access cache's lifetime. A member's groups are set through `/admin/members` (admin.ts), with
 * `knownGroups` checking the names.
 */
import { Router, type Request, type Response } from "express";
import { z } from "zod";
import { accessStores } from "../access/gate";
import type { GroupDoc } from "../access/groups";
import type { MemberDoc } from "../access/members";
import type { Group, GroupsAnswer } from "../contract/admin";
import { VIEWS } from "../contract/access";
import { QuarryError } from "../errors";
import { FULL_SCOPE, inScope, limitedScope, scopeDatasets } from "../tools/scope";
import { auditAction } from "../access/admin-audit";
import { callerOf } from "../access/caller";
import { parse } from "../runs/schemas";

/** A group's name: a short slug, lower-cased on the way in (it is the document id). */
export const GroupName = z
  .string()
  .trim()
  .toLowerCase()
  .regex(
    /^[a-z0-9][a-z0-9_-]{0,39}$/,
    "a group name is 1–40 characters: letters, digits, - and _, starting with a letter or digit",
  );

/** A dataset (`shop`) or one table of it (`shop.orders`), as a name; the warehouse check follows. */
const DatasetEntry = z
  .string()
  .trim()
  .toLowerCase()
  .transform((s) => s.replaceAll("`", "").replaceAll('"', ""))
  .pipe(
    z
      .string()
      .max(300)
      .regex(/^[^\s.]+(\.[^\s.]+){0,2}$/, "must be a dataset (shop) or one table of it (shop.orders)"),
  );
const Datasets = z
  .array(DatasetEntry)
  .min(1, "name at least one dataset or table")
  .max(100, "at most 100 entries");
/** Datasets named in a refusal at most (a message, not a catalog). */
const MAX_LISTED = 50;
const NewGroupBody = z.strictObject({ name: GroupName, datasets: Datasets });
const PatchGroupBody = z
  .strictObject({ datasets: Datasets.optional(), defaultView: z.enum(VIEWS).nullable().optional() })
  .refine((b) => b.datasets !== undefined || b.defaultView !== undefined, {
    message: "send datasets and/or defaultView",
  });

export function groupRoutes(): Router {
  const r = Router();
  r.get("/admin/groups", listGroups);
  r.post("/admin/groups", createGroup);
  r.patch("/admin/groups/:name", patchGroup);
  r.delete("/admin/groups/:name", deleteGroup);
  return r;
}

/** A stored group with the members in it. */
function groupView(g: GroupDoc, members: readonly MemberDoc[]): Group {
  return {
    name: g.name,
    datasets: [...g.datasets].sort(),
    members: members
      .filter((m) => m.groups?.includes(g.name))
      .map((m) => m.email)
      .sort(),
    ...(g.defaultView ? { defaultView: g.defaultView } : {}),
    createdBy: g.createdBy,
    createdAt: g.createdAt,
    updatedAt: g.updatedAt,
  };
}

async function listGroups(_req: Request, res: Response): Promise<void> {
  const { groups, members } = await accessStores();
  const [all, people] = await Promise.all([groups.fresh(), members.list()]);
  res.json({ groups: all.map((g) => groupView(g, people)) } satisfies GroupsAnswer);
}

async function createGroup(req: Request, res: Response): Promise<void> {
  const body = parse(NewGroupBody, req.body ?? {}, "body");
  const datasets = await warehouseEntries(body.datasets);
  const { groups } = await accessStores();
  const doc = await groups.create(body.name, datasets, callerOf(req).email ?? callerOf(req).uid);
  if (!doc) throw new QuarryError("conflict:group", `A group named ${body.name} exists: change it instead.`);
  await auditAction(req, "group.create", doc.name, { datasets });
  res.status(201).json(groupView(doc, []) satisfies Group);
}

async function patchGroup(req: Request, res: Response): Promise<void> {
  const name = parse(GroupName, req.params.name, "path");
  const body = parse(PatchGroupBody, req.body ?? {}, "body");
  const datasets = body.datasets && (await warehouseEntries(body.datasets));
  const { groups, members } = await accessStores();
  const change = {
    ...(datasets ? { datasets } : {}),
    ...(body.defaultView !== undefined ? { defaultView: body.defaultView } : {}),
  };
  const doc = await groups.update(name, change);
  if (!doc) throw new QuarryError("not_found:group", `There is no group ${name}: create it first.`);
  await auditAction(req, "group.update", name, change);
  res.json(groupView(doc, await members.list()) satisfies Group);
}

async function deleteGroup(req: Request, res: Response): Promise<void> {
  const name = parse(GroupName, req.params.name, "path");
  const { groups, members } = await accessStores();
  const removed = await groups.remove(name, (tx) => members.leaveGroup(tx, name));
  if (!removed) throw new QuarryError("not_found:group", `There is no group ${name}.`);
  members.forget(removed.also);
  await auditAction(req, "group.delete", name, { members: removed.also });
  res.status(204).end();
}

/**
 * The entries, each naming a dataset or a table this deployment's warehouse has (matched as a
 * scope entry is: `shop` covers `shop.orders` and `project.shop.orders`), deduplicated and sorted;
 * else a 400 that lists the datasets there are.
 */
async function warehouseEntries(entries: string[]): Promise<string[]> {
  const { getWarehouse } = await import("../tools/index.js");
  const tables = await (await getWarehouse()).listTables();
  const unknown = entries.filter((e) => !tables.some((t) => inScope(limitedScope([e]), t.id)));
  if (unknown.length) {
    const there = scopeDatasets(FULL_SCOPE, tables);
    const shown =
      there.length > MAX_LISTED
        ? [...there.slice(0, MAX_LISTED), `${there.length - MAX_LISTED} more`]
        : there;
    throw new QuarryError(
      "bad_request:body",
      `Invalid body: datasets: the warehouse has no dataset or table ${unknown.join(", ")}. ` +
        `Its datasets: ${shown.join(", ") || "none"} (or one table of one, as dataset.table).`,
    );
  }
  return [...new Set(entries)].sort();
}

/**
 * The group names as given (lower case, deduplicated, sorted) when every one is a group that
 * exists now; else a 400 naming the groups there are.
 */
export async function knownGroups(names: readonly string[]): Promise<string[]> {
  const { groups } = await accessStores();
  const defined = (await groups.fresh()).map((g) => g.name);
  const unknown = names.filter((n) => !defined.includes(n));
  if (unknown.length) {
    throw new QuarryError(
      "bad_request:body",
      `Invalid body: groups: there is no group ${unknown.join(", ")}. ` +
        (defined.length
          ? `The groups: ${defined.join(", ")}.`
          : "No group is defined yet: create one first."),
    );
  }
  return [...new Set(names)].sort();
}
