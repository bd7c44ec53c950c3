/**
 * The access gate: every API route but `/ok`, `/info` and `/client-config` passes through
 * `requireAccess` (mounted once, before the routes are loaded, so a route added later is behind it
 * by construction), and a background run checks again when it starts. It resolves the caller's
 * role and quota limits, or refuses: 403 `forbidden:not_member` (saying whom to ask), 503
 * `access:not_configured` (naming the settings) — never letting a request through when the policy
 * is missing or the members list cannot be read.
 */
import type { NextFunction, Request, Response } from "express";
import type { Preferences, QuotaLimits, Role } from "../contract/access";
import { config } from "../config";
import { QuarryError } from "../errors";
import { firestore } from "../services";
import { AuditLog } from "./audit";
import { GroupStore } from "./groups";
import { MemberStore, type MemberDoc } from "./members";
import { scopeFor } from "./scope";
import type { Scope } from "../tools/scope";
import { decideAccess, policyConfigured, refusalMessage, type AccessSettings, type Identity } from "./policy";
import { QuotaStore } from "./quota";
import { PreferenceStore, effectiveView } from "./preferences";
import { TokenStore } from "./tokens";
import { OAuthGrants } from "./oauth-grants";

/** What the gate found: the caller's role, quota limits and data scope. */
export interface Access {
  role: Role;
  limits: QuotaLimits;
  /** The datasets and tables this person may see, decided once for the request (`access/scope.ts`). */
  scope: Scope;
}

interface Stores {
  members: MemberStore;
  groups: GroupStore;
  quotas: QuotaStore;
  audit: AuditLog;
  tokens: TokenStore;
  /** MCP clients allowed through OAuth: listed, revoked, checked on each access token. */
  oauthGrants: OAuthGrants;
  /** Each person's view (business or analyst). */
  preferences: PreferenceStore;
}

let stores: Promise<Stores> | undefined;

/** The access stores of this instance (members cache, quotas, audit log). */
export function accessStores(): Promise<Stores> {
  stores ??= Promise.all([firestore(), import("firebase-admin/firestore")]).then(([db, mod]) => {
    const cfg = config().access;
    return {
      members: new MemberStore(db, "members", cfg.cacheMs),
      groups: new GroupStore(db, "groups", cfg.cacheMs),
      quotas: new QuotaStore(db, mod.FieldValue, mod.Timestamp, cfg.questionWindowMs),
      audit: new AuditLog(db, mod.Timestamp, cfg.auditTtlDays),
      tokens: new TokenStore(db, mod.Timestamp),
      oauthGrants: new OAuthGrants(db),
      preferences: new PreferenceStore(db),
    };
  });
  return stores;
}

/** The settings the policy is decided from. */
function accessSettings(): AccessSettings {
  const { allowedDomains, admins, contact, localOpen } = config().access;
  return { allowedDomains, admins, contact, localOpen };
}

/** Whether this deployment can serve anyone, and if not the words that say what to set. */
export function accessProblem(): string | undefined {
  const { problem } = config().access;
  if (problem) return problem;
  const settings = accessSettings();
  return policyConfigured(settings) ? undefined : refusalMessage(settings, "not_configured");
}

/** The person's limits: their member entry's overrides over the deployment's defaults. */
function limitsOf(member: MemberDoc | undefined): QuotaLimits {
  return { ...config().access.quotas, ...(member?.quotas ?? {}) };
}

/**
 * Resolves `who`'s access or throws the refusal. `fresh` skips the members cache (a background run
 * starting: someone removed since it was queued must not run).
 */
export async function resolveAccess(who: Identity, opts: { fresh?: boolean } = {}): Promise<Access> {
  const problem = accessProblem();
  if (problem) throw new QuarryError("access:not_configured", problem);
  const settings = accessSettings();
  const { members, groups } = await accessStores();
  const email = who.emailVerified ? who.email : undefined;
  const [member, allGroups] = await Promise.all([
    email ? (opts.fresh ? members.fresh(email) : members.get(email)) : undefined,
    opts.fresh ? groups.fresh() : groups.all(),
  ]);
  const decision = decideAccess(settings, who, member);
  if (!decision.allowed) {
    const code = decision.why === "not_configured" ? "access:not_configured" : "forbidden:not_member";
    throw new QuarryError(code, refusalMessage(settings, decision.why, who.email));
  }
  return {
    role: decision.role,
    limits: limitsOf(member),
    scope: scopeFor(decision.role, member?.groups, allGroups),
  };
}

/** Express middleware: sets `req.caller.access` or refuses. Runs after `requireUser`. */
export async function requireAccess(req: Request, _res: Response, next: NextFunction): Promise<void> {
  const caller = req.caller;
  if (!caller) throw new QuarryError("unauthorized:token", "Sign in first.");
  caller.access = await resolveAccess(caller);
  next();
}

/** 403 unless the caller is an admin. */
export function requireAdmin(req: Request, _res: Response, next: NextFunction): void {
  if (req.caller?.access?.role !== "admin") {
    throw new QuarryError(
      "forbidden:admin_only",
      "Only a Quarry admin can do this. Ask an admin if you need it done.",
    );
  }
  next();
}

/** The view a person gets now (their choice, their group's default, or analyst). */
export async function preferencesOf(caller: { uid: string; email?: string }): Promise<Preferences> {
  const { preferences, members, groups } = await accessStores();
  const [chosen, member, all] = await Promise.all([
    preferences.chosen(caller.uid),
    caller.email ? members.get(caller.email) : Promise.resolve(undefined),
    groups.all(),
  ]);
  return effectiveView(chosen, member?.groups ?? [], all);
}
