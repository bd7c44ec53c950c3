/**
 * The caller's data scope, decided once per request from their role, their groups and the groups
 * defined (pure; the gate reads the stores). Admins see every allowed dataset; with no group
 * defined, members do too (as before groups existed); once any group exists, a member sees the
 * union of their groups' datasets — nothing when they are in none.
 */
import type { Role } from "../contract/access";
import { FULL_SCOPE, limitedScope, type Scope } from "../tools/scope";
import type { GroupDoc } from "./groups";

export function scopeFor(
  role: Role,
  memberGroups: readonly string[] | undefined,
  groups: readonly GroupDoc[],
): Scope {
  if (role === "admin" || groups.length === 0) return FULL_SCOPE;
  const mine = new Set((memberGroups ?? []).map((g) => g.toLowerCase()));
  return limitedScope(groups.filter((g) => mine.has(g.name.toLowerCase())).flatMap((g) => g.datasets));
}
