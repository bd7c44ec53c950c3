/**
 * `GET /me` (who the caller is, their role and quotas) and the admin API under `/admin/*` (admins
 * only, 403 `forbidden:admin_only` otherwise): members (with their groups; the groups themselves
 * are in groups.ts), usage, the audit log, and proposals — verified queries proposed by up-votes,
 * reviewed here (edit, approve, reject). Every admin action is written to the audit log with who
 * did it.
 */
import { Router, type Request, type Response } from "express";
import { z } from "zod";
import { accessStores, requireAdmin } from "../access/gate";
import type { MemberDoc } from "../access/members";
import { ROLES } from "../contract/access";
import { me } from "./me";
import type { AuditAnswer, Member, MembersAnswer, UsageAnswer } from "../contract/admin";
import { config } from "../config";
import { QuarryError } from "../errors";
import { callerOf } from "../access/caller";
import { parse } from "../runs/schemas";
import { auditAction } from "../access/admin-audit";
import { GroupName, groupRoutes, knownGroups } from "./groups";
import { proposalRoutes } from "./proposals";
import { contextImportRoutes } from "./context-imports";

const email = z.string().trim().toLowerCase().email("must be an email address").max(320);
const QuotaOverrides = z
  .strictObject({
    questionsPerMinute: z.number().int().min(0).max(10_000),
    bytesPerDay: z.number().int().min(0),
    tokensPerDay: z.number().int().min(0),
  })
  .partial();
/** The groups a member is in (each must exist; `[]` = none). */
const MemberGroups = z.array(GroupName).max(50, "at most 50 groups");
const AddMemberBody = z.strictObject({
  email,
  role: z.enum(ROLES).optional(),
  quotas: QuotaOverrides.optional(),
  groups: MemberGroups.optional(),
});
const PatchMemberBody = z.strictObject({
  role: z.enum(ROLES).optional(),
  quotas: QuotaOverrides.nullable().optional(),
  groups: MemberGroups.optional(),
});
const UsageQuery = z.strictObject({ days: z.coerce.number().int().min(1).max(90).default(30) });
const AuditQuery = z.strictObject({
  person: z.string().trim().min(1).max(320).optional(),
  since: z.coerce.date().optional(),
  until: z.coerce.date().optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().max(100).optional(),
});

export function adminRoutes(): Router {
  const r = Router();
  r.get("/me", me);
  r.use("/admin", requireAdmin);
  r.get("/admin/members", listMembers);
  r.post("/admin/members", addMember);
  r.patch("/admin/members/:email", patchMember);
  r.delete("/admin/members/:email", removeMember);
  r.get("/admin/usage", usage);
  r.get("/admin/audit", readAudit);
  r.use(groupRoutes());
  r.use(proposalRoutes());
  r.use(contextImportRoutes());
  return r;
}

/** A members-list entry as the API answers it: its groups always listed (none = `[]`). */
function memberView(doc: MemberDoc): Member {
  return { ...doc, groups: [...(doc.groups ?? [])].sort() };
}

async function listMembers(_req: Request, res: Response): Promise<void> {
  const { members, groups } = await accessStores();
  const { allowedDomains, admins } = config().access;
  const [list, defined] = await Promise.all([members.list(), groups.fresh()]);
  res.json({
    members: list.map(memberView),
    policy: { allowedDomains, admins },
    groups: defined.map((g) => g.name).sort(),
  } satisfies MembersAnswer);
}

async function addMember(req: Request, res: Response): Promise<void> {
  const body = parse(AddMemberBody, req.body ?? {}, "body");
  const groups = body.groups && (await knownGroups(body.groups));
  const { members } = await accessStores();
  const by = callerOf(req).email ?? callerOf(req).uid;
  const doc = await members.put(body.email, { role: body.role ?? "member", quotas: body.quotas, groups }, by);
  await auditAction(req, "member.add", doc.email, {
    role: doc.role,
    ...(doc.quotas ? { quotas: doc.quotas } : {}),
    ...(doc.groups ? { groups: doc.groups } : {}),
  });
  res.status(201).json(memberView(doc) satisfies Member);
}

async function patchMember(req: Request, res: Response): Promise<void> {
  const target = parse(email, req.params.email, "path");
  const body = parse(PatchMemberBody, req.body ?? {}, "body");
  const change = { ...body, ...(body.groups ? { groups: await knownGroups(body.groups) } : {}) };
  const { members } = await accessStores();
  if (!(await members.fresh(target)))
    throw new QuarryError("not_found:member", `${target} is not on the members list: add them first.`);
  const doc = await members.put(target, change, callerOf(req).email ?? callerOf(req).uid);
  await auditAction(req, "member.update", target, change);
  res.json(memberView(doc) satisfies Member);
}

async function removeMember(req: Request, res: Response): Promise<void> {
  const target = parse(email, req.params.email, "path");
  const { members } = await accessStores();
  if (!(await members.remove(target)))
    throw new QuarryError("not_found:member", `${target} is not on the members list.`);
  await auditAction(req, "member.remove", target);
  res.status(204).end();
}

/** Per person: questions, bytes and tokens today and over the last `days` days. */
async function usage(req: Request, res: Response): Promise<void> {
  const { days } = parse(UsageQuery, req.query, "query");
  const { quotas } = await accessStores();
  const today = new Date().toISOString().slice(0, 10);
  const people = new Map<string, { uid: string; email: string | null; today: Totals; period: Totals }>();
  for (const d of await quotas.usage(days)) {
    const p = people.get(d.uid) ?? { uid: d.uid, email: d.email, today: zero(), period: zero() };
    add(p.period, d);
    if (d.day === today) add(p.today, d);
    people.set(d.uid, p);
  }
  res.json({
    days,
    people: [...people.values()].sort((a, b) => b.period.bytes - a.period.bytes),
  } satisfies UsageAnswer);
}

type Totals = { questions: number; bytes: number; tokens: number };
const zero = (): Totals => ({ questions: 0, bytes: 0, tokens: 0 });
function add(t: Totals, d: Totals) {
  t.questions += d.questions;
  t.bytes += d.bytes;
  t.tokens += d.tokens;
}

async function readAudit(req: Request, res: Response): Promise<void> {
  const q = parse(AuditQuery, req.query, "query");
  const { audit } = await accessStores();
  res.json((await audit.read(q)) satisfies AuditAnswer);
}
