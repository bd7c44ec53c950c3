/**
 * The authored context one person may be given: only what is about data inside their scope.
 * A context file about a dataset they cannot see is left out whole; of a dataset they see only
 * part of, its rules are left out (they may speak of any table), and its glossary entries,
 * verified queries and table notes are kept only when every table they name is in scope. Verified
 * queries approved in the admin page are filtered the same way. Cached per knowledge base and scope.
 */
import { namesInScope } from "../tools/scope-gate";
import { datasetCoverage, inScope, type Scope } from "../tools/scope";
import { joinEnd, type ContextFile, type VerifiedQueryItem } from "./authored";
import { KnowledgeBase } from "./knowledge";

const cache = new WeakMap<KnowledgeBase, Map<string, KnowledgeBase>>();
const MAX_SCOPES = 64;

/**
 * `kb` as `scope` may see it. `datasets` are every dataset name SQL can qualify a table with (from
 * the catalog), so a verified query naming `finance.salaries` is recognised whatever file holds it.
 */
export function scopedKnowledge(kb: KnowledgeBase, scope: Scope, datasets: readonly string[]): KnowledgeBase {
  if (scope.all) return kb;
  let byScope = cache.get(kb);
  if (!byScope) cache.set(kb, (byScope = new Map()));
  const key = `${scope.key}|${datasets.join(",")}`;
  let scoped = byScope.get(key);
  if (!scoped) {
    const { files, extra } = kb.parts();
    // Without the dataset names (the catalog could not be read) no SQL can be checked: none is kept.
    const visibleSql = (sql: string) => datasets.length > 0 && namesInScope(sql, scope, datasets);
    scoped = new KnowledgeBase(
      files.flatMap((f) => pruneFile(f, scope, visibleSql)),
      extra.filter((q: VerifiedQueryItem) => visibleSql(q.sql)),
    );
    if (byScope.size >= MAX_SCOPES) byScope.delete(byScope.keys().next().value!);
    byScope.set(key, scoped);
  }
  return scoped;
}

function pruneFile(f: ContextFile, scope: Scope, visibleSql: (sql: string) => boolean): ContextFile[] {
  const coverage = datasetCoverage(scope, f.dataset);
  if (coverage === "none") return [];
  const whole = coverage === "whole";
  const tables = Object.fromEntries(
    Object.entries(f.tables).filter(([name]) =>
      inScope(scope, name.includes(".") ? name : `${f.dataset}.${name}`),
    ),
  );
  return [
    {
      ...f,
      rules: whole ? f.rules : [],
      // Of a dataset seen in part, a term's SQL must name a table in scope (`salary + bonus` names none).
      glossary: f.glossary.filter((g) =>
        whole ? !g.sql || visibleSql(g.sql) : !!g.sql && visibleSql(g.sql) && namesSomeTable(g.sql, scope),
      ),
      verified_queries: f.verified_queries.filter((q) => visibleSql(q.sql)),
      // A join is kept only when both its tables are in scope (its end names the other table).
      joins: f.joins.filter((j) =>
        [j.from, j.to].every((end) => inScope(scope, joinEnd(f.dataset, end).table)),
      ),
      tables,
    },
  ];
}

/** Whether `sql` names a table of `scope`'s single-table entries (`finance.salaries`). */
function namesSomeTable(sql: string, scope: Scope): boolean {
  const text = sql.toLowerCase().replace(/[`"]/g, "");
  return scope.entries.some((e) => e.includes(".") && text.includes(e.split(".").slice(-2).join(".")));
}
