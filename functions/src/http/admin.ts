/**
 * `GET /me` (who the caller is, their role and quotas) and the admin API under `/admin/*` (admins
 * only, 403 `forbidden:admin_only` otherwise): members, usage, the audit log, and proposals —
 * verified queries proposed by up-votes, reviewed here (edit, approve, reject). Every admin action
 * is written to the audit log with who did it.
 */
import { Router, type Request, type Response } from "express";
import { z } from "zod";
import { accessStores, requireAdmin } from "../access/gate";
import { ROLES, type Me } from "../contract/access";
import type { AuditAnswer, Member, MembersAnswer, UsageAnswer } from "../contract/admin";
import { config } from "../config";
import { identity, userMode } from "../identity";
import { QuarryError } from "../errors";
import { callerOf } from "./auth";
import { parse } from "./schemas";
import { auditAction } from "./admin-audit";
import { proposalRoutes } from "./proposals";

const email = z.string().trim().toLowerCase().email("must be an email address").max(320);
const QuotaOverrides = z
  .strictObject({
    questionsPerMinute: z.number().int().min(0).max(10_000),
    bytesPerDay: z.number().int().min(0),
    tokensPerDay: z.number().int().min(0),
  })
  .partial();
const AddMemberBody = z.strictObject({
  email,
  role: z.enum(ROLES).optional(),
  quotas: QuotaOverrides.optional(),
});
const PatchMemberBody = z.strictObject({
  role: z.enum(ROLES).optional(),
  quotas: QuotaOverrides.nullable().optional(),
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
  r.use(proposalRoutes());
  return r;
}

async function me(req: Request, res: Response): Promise<void> {
  const caller = callerOf(req);
  const { quotas } = await accessStores();
  const access = caller.access!;
  res.json({
    uid: caller.uid,
    email: caller.email ?? null,
    role: access.role,
    quotas: await quotas.figures(caller.uid, access.limits),
    bigquery: userMode()
      ? { identity: "user", ...(await (await identity()).store.status(caller.uid)) }
      : { identity: "service" },
  } satisfies Me);
}

async function listMembers(_req: Request, res: Response): Promise<void> {
  const { members } = await accessStores();
  const { allowedDomains, admins } = config().access;
  res.json({ members: await members.list(), policy: { allowedDomains, admins } } satisfies MembersAnswer);
}

async function addMember(req: Request, res: Response): Promise<void> {
  const body = parse(AddMemberBody, req.body ?? {}, "body");
  const { members } = await accessStores();
  const by = callerOf(req).email ?? callerOf(req).uid;
  const doc = await members.put(body.email, { role: body.role ?? "member", quotas: body.quotas }, by);
  await auditAction(req, "member.add", doc.email, {
    role: doc.role,
    ...(doc.quotas ? { quotas: doc.quotas } : {}),
  });
  res.status(201).json(doc satisfies Member);
}

async function patchMember(req: Request, res: Response): Promise<void> {
  const target = parse(email, req.params.email, "path");
  const body = parse(PatchMemberBody, req.body ?? {}, "body");
  const { members } = await accessStores();
  if (!(await members.fresh(target)))
    throw new QuarryError("not_found:member", `${target} is not on the members list: add them first.`);
  const doc = await members.put(target, body, callerOf(req).email ?? callerOf(req).uid);
  await auditAction(req, "member.update", target, body);
  res.json(doc satisfies Member);
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
