/**
 * The caller's data scope, decided once per request from their role, their groups and the groups
 * defined (pure; the gate reads the stores). Admins see every allowed dataset; with no group
 * defined, members do too (as before groups existed); once any group exists, a member sees the
 * union of their groups' datasets — nothing when they are in none.
 */
import type { Role } from "../contract/access";
import { FULL_SCOPE, limitedScope, type Scope } from "../tools/scope";
import type { GroupDoc, GroupStore } from "./groups";
import type { MemberStore } from "./members";
import { decideAccess, refusalMessage, type AccessSettings } from "./policy";

export function scopeFor(
  role: Role,
  memberGroups: readonly string[] | undefined,
  groups: readonly GroupDoc[],
): Scope {
  if (role === "admin" || groups.length === 0) return FULL_SCOPE;
  const mine = new Set((memberGroups ?? []).map((g) => g.toLowerCase()));
  return limitedScope(groups.filter((g) => mine.has(g.name.toLowerCase())).flatMap((g) => g.datasets));
}

/**
 * The role and scope of a person by email, read from the stores as the gate would (for commands
 * such as `npm run context -- --as <email>`); throws the gate's refusal for a non-member.
 */
export async function scopeOfEmail(
  email: string,
  settings: AccessSettings,
  stores: { members: MemberStore; groups: GroupStore },
): Promise<{ role: Role; scope: Scope }> {
  const [member, groups] = await Promise.all([stores.members.fresh(email), stores.groups.fresh()]);
  const decision = decideAccess(settings, { uid: email, email, emailVerified: true }, member);
  if (!decision.allowed) throw new Error(refusalMessage(settings, decision.why, email));
  return { role: decision.role, scope: scopeFor(decision.role, member?.groups, groups) };
}
