/**
 * The catalog as one person may see it: only the tables inside their scope (`tools/scope.ts`),
 * with their columns and stored values. Cached per catalog and scope key, so linking's indexes
 * (built per catalog object) are built once per scope, not per question.
 */
import { FULL_SCOPE, inScope, type Scope } from "../tools/scope";
import type { Catalog } from "./catalog";

const cache = new WeakMap<Catalog, Map<string, Catalog>>();
/** Distinct scopes kept per catalog; beyond it the oldest is dropped. */
const MAX_SCOPES = 64;

export function scopedCatalog(catalog: Catalog, scope: Scope = FULL_SCOPE): Catalog {
  if (scope.all) return catalog;
  let byScope = cache.get(catalog);
  if (!byScope) cache.set(catalog, (byScope = new Map()));
  let scoped = byScope.get(scope.key);
  if (!scoped) {
    scoped = { ...catalog, tables: catalog.tables.filter((t) => inScope(scope, t.id)) };
    if (byScope.size >= MAX_SCOPES) byScope.delete(byScope.keys().next().value!);
    byScope.set(scope.key, scoped);
  }
  return scoped;
}
