/**
 * The team's dbt or LookML project pushed and reviewed through the API (admins only; docs/semantic-layer.md):
 * - `POST /admin/context/imports` — a project's files (dbt's `target/manifest.json` and
 *   `semantic_manifest.json` after `dbt build`, or its YAML; LookML's `.lkml` files) are imported
 *   as `npm run context -- import` does (matched to the warehouse, metrics compiled and dry-run) and
 *   kept waiting for review with their diff against the import in use. `"apply": true` applies it
 *   at once (a CI step that does not want a review); `"propose": true` puts its saved queries
 *   among the proposals. Bad input is a 400 naming the file and line; the import in use stays.
 * - `GET /admin/context/imports` — each project's import in use and the one waiting, with its changes;
 * - `POST /admin/context/imports/:id/apply` — the waiting import, whole or the changes named;
 * - `DELETE /admin/context/imports/:id/pending` — the waiting import dropped.
 * Applied changes reach every instance's prompts within seconds, without a redeploy.
 */
import { Router, type Request, type Response } from "express";
import { z } from "zod";
import type { ContextImportsAnswer, ContextImportView } from "../contract/admin";
import { QuarryError } from "../errors";
import { config } from "../config";
import { firestore } from "../services";
import { auditAction } from "../access/admin-audit";
import { callerOf } from "../access/caller";
import { importStore } from "../runs/runtime";
import { parse } from "../runs/schemas";

const ImportId = z
  .string()
  .regex(/^(dbt|lookml)-[\w.-]{1,120}$/, "must be an import id like dbt-jaffle_shop");
const Name = z.string().trim().min(1).max(120);
const PushBody = z.strictObject({
  source: z.enum(["dbt", "lookml"]),
  project: Name.regex(/^[\w.-]+$/, "letters, digits, _ . - only").optional(),
  files: z
    .record(z.string().min(1).max(1_000), z.string())
    .refine((f) => Object.keys(f).length > 0, { message: "send the project's files" })
    .refine((f) => Object.keys(f).length <= 5_000, { message: "at most 5,000 files" }),
  map: z.record(Name, Name).optional(),
  dataset: Name.optional(),
  apply: z.boolean().optional(),
  propose: z.boolean().optional(),
});
const ApplyBody = z.strictObject({
  /** The changes to apply (their ids); absent = all of them. */
  changes: z.array(z.string().min(1).max(2_000)).max(10_000).optional(),
  /** The waiting import's checksum as the review showed it: another push since is a 409. */
  checksum: z.string().max(200).optional(),
});

export function contextImportRoutes(): Router {
  const r = Router();
  r.get("/admin/context/imports", list);
  r.post("/admin/context/imports", push);
  r.post("/admin/context/imports/:id/apply", apply);
  r.delete("/admin/context/imports/:id/pending", dismiss);
  return r;
}

const by = (req: Request) => callerOf(req).email ?? callerOf(req).uid;

/** The import errors as the API's: what to fix, in words. */
async function refusing<T>(fn: () => Promise<T>): Promise<T> {
  const [{ ImportError }, { StaleReviewError }] = await Promise.all([
    import("../context/imports/errors.js"),
    import("../context/imports/apply.js"),
  ]);
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ImportError)
      throw new QuarryError("bad_request:import", `Not imported: ${err.message}.`, { cause: err });
    if (err instanceof StaleReviewError)
      throw new QuarryError("conflict:import", err.message, { cause: err });
    throw err;
  }
}

async function list(_req: Request, res: Response): Promise<void> {
  const imports: ContextImportView[] = await (await importStore()).list();
  res.json({ imports } satisfies ContextImportsAnswer);
}

async function push(req: Request, res: Response): Promise<void> {
  const body = parse(PushBody, req.body ?? {}, "body");
  const [{ getWarehouse }, { importPushedProject }] = await Promise.all([
    import("../tools/index.js"),
    import("../context/imports/pushed.js"),
  ]);
  const store = await importStore();
  const layer = await refusing(async () => importPushedProject(body, await getWarehouse()));
  let record = await refusing(() => store.push(layer, by(req)));
  await auditAction(req, "import.push", record.id, {
    generatedAt: layer.generatedAt,
    changes: record.pending?.changes.length ?? 0,
  });
  let applied: number | undefined;
  if (body.apply) {
    const out = await refusing(() => store.apply(record.id, by(req), { reviewed: false }));
    record = out.record;
    applied = out.applied.length;
    await auditAction(req, "import.apply", record.id, { changes: applied, whole: true });
  }
  let proposed: string[] | undefined;
  if (body.propose) {
    const { proposeSavedQueries } = await import("../context/imports/propose.js");
    proposed = (await proposeSavedQueries(await firestore(), config().feedbackCollection, layer)).proposed;
  }
  res
    .status(201)
    .location(`/admin/context/imports/${record.id}`)
    .json({
      ...record,
      ...(applied !== undefined ? { applied } : {}),
      ...(proposed ? { proposed } : {}),
    } satisfies ContextImportView & { applied?: number; proposed?: string[] });
}

async function apply(req: Request, res: Response): Promise<void> {
  const id = parse(ImportId, req.params.id, "path");
  const body = parse(ApplyBody, req.body ?? {}, "body");
  const store = await importStore();
  if (!(await store.get(id))) throw new QuarryError("not_found:import", `No import ${id}: push it first.`);
  const { record, applied } = await refusing(() =>
    store.apply(id, by(req), { ids: body.changes, checksum: body.checksum, reviewed: true }),
  );
  await auditAction(req, "import.apply", id, {
    changes: applied.map((c) => c.id),
    whole: !body.changes,
  });
  res.json({ ...record, applied: applied.length } satisfies ContextImportView & { applied: number });
}

async function dismiss(req: Request, res: Response): Promise<void> {
  const id = parse(ImportId, req.params.id, "path");
  if (!(await (await importStore()).dismiss(id)))
    throw new QuarryError("not_found:import", `${id} has no import waiting for review.`);
  await auditAction(req, "import.dismiss", id);
  res.status(204).end();
}
