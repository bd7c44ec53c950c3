/**
 * A person's data scope: the datasets (`shop`) and single tables (`finance.salaries`) they may see.
 * Computed once per request in `access/scope.ts` and passed down explicitly; the tools and the
 * context layer take it as a parameter and never show a table, column, value or context entry
 * outside it. A table out of scope is answered exactly like a table that does not exist.
 *
 * Names match by their last parts, whatever the engine's id looks like: `shop` matches
 * `shop.orders` (DuckDB) and `my-project.shop.orders` (BigQuery); `finance.salaries` matches that
 * one table. Matching is case-insensitive.
 */

export interface Scope {
  /** Every table the deployment allows (admins; members while no group is defined). */
  readonly all: boolean;
  /** Datasets and `dataset.table` entries, lower case, sorted; empty with `all`. */
  readonly entries: readonly string[];
  /** Stable key for caches of scoped catalogs, values and linking indexes. */
  readonly key: string;
}

/** Everything the deployment allows. */
export const FULL_SCOPE: Scope = Object.freeze({ all: true, entries: Object.freeze([]), key: "*" });

/** A scope limited to `entries` (datasets or `dataset.table`); an empty list sees nothing. */
export function limitedScope(entries: Iterable<string>): Scope {
  const clean = [...new Set([...entries].map((e) => normalize(e)).filter(Boolean))].sort();
  return Object.freeze({ all: false, entries: Object.freeze(clean), key: `[${clean.join(",")}]` });
}

function normalize(name: string): string {
  return name.trim().toLowerCase().replaceAll("`", "").replaceAll('"', "");
}

/** The parts of a table id, lower case, without quotes (`"a"."b"` and `` `a.b` `` alike). */
function partsOf(tableId: string): string[] {
  return normalize(tableId)
    .split(".")
    .filter((p) => p !== "");
}

/** Whether `tableId` (as the engine names it) is inside `scope`. */
export function inScope(scope: Scope, tableId: string): boolean {
  if (scope.all) return true;
  const parts = partsOf(tableId);
  if (parts.length < 2) return false;
  const table = parts[parts.length - 1];
  // DuckDB names an attached database's tables `db.main.table`; `db` is the dataset there.
  const datasets = datasetNames(parts.slice(0, -1));
  // A name written without its project (`finance.salaries`) may mean a project's entry
  // (`p.finance.salaries`); the engine's resolved id is checked again after the dry run.
  const short = parts.length <= 2;
  return scope.entries.some((e) =>
    datasets.some(
      (d) =>
        e === d || e === `${d}.${table}` || (short && (e.endsWith(`.${d}`) || e.endsWith(`.${d}.${table}`))),
    ),
  );
}

/** The names a table's dataset answers to: `finance`, `project.finance`, and `db` for `db.main`. */
function datasetNames(prefix: string[]): string[] {
  const out: string[] = [];
  for (let i = prefix.length - 1; i >= 0; i--) out.push(prefix.slice(i).join("."));
  if (prefix.length >= 2 && prefix[prefix.length - 1] === "main") {
    const bare = prefix.slice(0, -1);
    for (let i = bare.length - 1; i >= 0; i--) out.push(bare.slice(i).join("."));
  }
  return out;
}

/**
 * The scope of one query of a conversation: the person's scope plus that conversation's uploaded
 * tables (only they ever name them; another thread's uploads are never added).
 */
export function withUploads(scope: Scope, uploads: readonly { table: string }[] | undefined): Scope {
  if (scope.all || !uploads?.length) return scope;
  return limitedScope([...scope.entries, ...uploads.map((u) => u.table)]);
}

/** The items whose table id is in scope (`id` picks it). */
export function withinScope<T>(scope: Scope, items: readonly T[], id: (item: T) => string): T[] {
  return scope.all ? [...items] : items.filter((item) => inScope(scope, id(item)));
}

/** The dataset part of a table id (`shop.orders` → `shop`, `p.finance.salaries` → `p.finance`). */
function datasetOfTable(tableId: string): string {
  const parts = tableId.split(".");
  return parts.slice(0, -1).join(".");
}

/**
 * What a person can ask about, for `GET /me` and the page: the datasets (and single tables) of
 * `tables` inside the scope, as `dataset` or `dataset.table`, sorted.
 */
export function scopeDatasets(scope: Scope, tables: readonly { id: string }[]): string[] {
  const out = new Set<string>();
  for (const t of tables) {
    if (!inScope(scope, t.id)) continue;
    const parts = partsOf(t.id);
    const names = datasetNames(parts.slice(0, -1));
    const table = parts[parts.length - 1];
    const whole = scope.all || scope.entries.some((e) => names.includes(e));
    const dataset = datasetOfTable(t.id).replace(/\.main$/i, "");
    out.add(whole ? dataset : `${dataset}.${table}`);
  }
  return [...out].sort();
}

/**
 * `scope` narrowed to the tables of `tableIds` (user identity mode: the tables the person's own
 * credentials can read). The result is a limited scope of single tables inside both.
 */
export function narrowScope(scope: Scope, tableIds: readonly string[]): Scope {
  return limitedScope(
    // The whole id: `p.finance.salaries` must not cover another project's `finance.salaries`.
    tableIds.filter((id) => inScope(scope, id)).map((id) => partsOf(id).join(".")),
  );
}

/** The scope a key stands for (`key` of a scope stored with a thread). */
export function scopeFromKey(key: string | undefined): Scope {
  if (key === undefined || key === FULL_SCOPE.key) return FULL_SCOPE;
  const inner = /^\[(.*)\]$/.exec(key)?.[1];
  return limitedScope(inner ? inner.split(",") : []);
}

/** Whether everything `inner` allows, `outer` allows too. */
export function coveredBy(inner: Scope, outer: Scope): boolean {
  if (outer.all) return true;
  if (inner.all) return false;
  // "*" is never a table's name: a dataset entry needs the whole dataset in `outer`.
  return inner.entries.every((e) => inScope(outer, e.includes(".") ? e : `${e}.*`));
}

/** How SQL may name a table's dataset: `p.finance` and `finance`; DuckDB's `db.main` also as `db`. */
export function datasetNamesOf(tableId: string): string[] {
  const prefix = tableId.split(".").slice(0, -1);
  const bare = prefix.filter((p) => p !== "main");
  return [...new Set([prefix.join("."), prefix.at(-1) ?? "", bare.join("."), bare.at(-1) ?? ""])].filter(
    Boolean,
  );
}

/**
 * How much of `dataset` the scope sees: `whole` (every table of it), `part` (some of its tables),
 * or `none`.
 */
export function datasetCoverage(scope: Scope, dataset: string): "whole" | "part" | "none" {
  // "*" is never a table's name: in scope only when the whole dataset is.
  if (inScope(scope, `${dataset}.*`)) return "whole";
  const bare = dataset.toLowerCase().split(".").pop()!;
  return scope.entries.some((e) => e.startsWith(`${bare}.`)) ? "part" : "none";
}
