/**
 * The schema catalog: every table the agent may query with its columns (nested fields flattened
 * as `a.b`), types, descriptions, partitioning, clustering and row counts, plus the values of
 * low-cardinality text columns — all read from warehouse metadata (DuckDB's catalog and distinct
 * values, which cost nothing; BigQuery's `tables.get` and the sample rows it reads without a job),
 * never by billed queries. Authored notes override the warehouse's descriptions.
 *
 * Built once and kept for `maxAgeMs` — in memory per instance and, with a store, in Firestore for
 * every instance (`catalog-store.ts`) — so a turn never re-lists the warehouse; `refresh` rebuilds
 * it on demand.
 */
import type { ColumnInfo, TableInfo, Warehouse } from "../tools/types";

/** Text columns with at most this many distinct values keep them in the catalog. */
const MAX_VALUES = 30;

interface CatalogColumn {
  name: string;
  type: string;
  description?: string;
  /** Distinct values of a low-cardinality text column. */
  values?: string[];
}

/** A join the team declared (context files or an import): `from` refers to `to`. */
export interface DeclaredJoin {
  from: { table: string; column: string };
  to: { table: string; column: string };
  cardinality: "many_to_one" | "one_to_one" | "one_to_many" | "many_to_many";
}

/**
 * One end of a declared join on a table: its column and the join's key (`@<to table>.<to column>`,
 * the same on both ends), which schema linking treats like a shared `*_id` key.
 */
interface DeclaredKey {
  column: string;
  key: string;
  /** Rows of this table per row of the other end (on the `from` end). */
  cardinality?: DeclaredJoin["cardinality"];
}

export interface CatalogTable extends TableInfo {
  columns: CatalogColumn[];
  /** The ends of declared joins on this table. */
  declared?: DeclaredKey[];
}

export interface Catalog {
  tables: CatalogTable[];
  builtAt: number;
}

const TEXT = /^(VARCHAR|STRING|TEXT|CHAR|ENUM)/i;

function flatten(columns: ColumnInfo[], prefix = ""): ColumnInfo[] {
  return columns.flatMap((c) => {
    const name = `${prefix}${c.name}`;
    return [{ ...c, name }, ...(c.fields ? flatten(c.fields, `${name}.`) : [])];
  });
}

/** Reads the catalog from the warehouse's metadata (see the file's header). */
export async function buildCatalog(
  warehouse: Warehouse,
  notes: Record<string, string> = {},
  opts: { concurrency?: number; joins?: readonly DeclaredJoin[] } = {},
): Promise<Catalog> {
  const infos = await warehouse.listTables();
  const tables: CatalogTable[] = new Array(infos.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < infos.length; i = next++) {
      const info = infos[i];
      const schema = await warehouse.describeTable(info.id);
      const columns: CatalogColumn[] = [];
      for (const c of flatten(schema.columns)) {
        const col: CatalogColumn = { name: c.name, type: c.type };
        const note = notes[`${info.id}.${c.name}`] ?? c.description;
        if (note) col.description = note;
        if (TEXT.test(c.type) && !c.name.includes(".")) {
          const values = warehouse.columnValues
            ? await warehouse.columnValues(info.id, c.name, MAX_VALUES)
            : sampleValues(schema.sampleRows, c.name);
          if (values?.length) col.values = values;
        }
        columns.push(col);
      }
      const description = notes[info.id] ?? info.description;
      tables[i] = { ...info, ...(description ? { description } : {}), columns };
    }
  };
  await Promise.all(Array.from({ length: Math.min(opts.concurrency ?? 4, infos.length) }, worker));
  addDeclared(tables, opts.joins ?? []);
  return { tables, builtAt: Date.now() };
}

/** Puts each declared join's two ends on its tables (a join naming a table not listed is skipped). */
function addDeclared(tables: CatalogTable[], joins: readonly DeclaredJoin[]): void {
  const byId = new Map(tables.map((t) => [t.id.toLowerCase(), t]));
  for (const j of joins) {
    const from = byId.get(j.from.table.toLowerCase());
    const to = byId.get(j.to.table.toLowerCase());
    if (!from || !to || from === to) continue;
    const key = `@${to.id}.${j.to.column}`.toLowerCase();
    (from.declared ??= []).push({ column: j.from.column, key, cardinality: j.cardinality });
    (to.declared ??= []).push({ column: j.to.column, key });
  }
}

function sampleValues(rows: Record<string, unknown>[], column: string): string[] | null {
  const values = new Set(rows.map((r) => r[column]).filter((v): v is string => typeof v === "string"));
  return values.size ? [...values].sort() : null;
}

/** Where a catalog is shared across instances (`catalog-store.ts` keeps it in Firestore). */
export interface CatalogStore {
  read(key: string): Promise<Catalog | undefined>;
  write(key: string, catalog: Catalog): Promise<void>;
}

export interface CatalogCacheOptions {
  /** A catalog older than this is rebuilt (default 10 minutes). */
  maxAgeMs?: number;
  /** Shared across instances (Firestore); without it each instance builds its own. */
  store?: CatalogStore;
  /** The store's key for this warehouse (see `catalogKey`). */
  key?: string;
  /** A store that cannot be read or written is reported here; the catalog is built instead. */
  onStoreError?: (err: unknown) => void;
}

/**
 * One catalog per warehouse: in memory for this instance, in the store for the others, rebuilt
 * from the warehouse when older than `maxAgeMs` (or on `refresh()`).
 */
export class CatalogCache {
  private current: Promise<Catalog> | undefined;
  private reloading = false;
  private readonly maxAgeMs: number;
  constructor(
    private readonly build: () => Promise<Catalog>,
    private readonly opts: CatalogCacheOptions = {},
  ) {
    this.maxAgeMs = opts.maxAgeMs ?? 10 * 60_000;
  }

  /** The catalog; a stale one in memory is served while its replacement loads in the background. */
  async get(): Promise<Catalog> {
    const c = this.current ? await this.current.catch(() => undefined) : undefined;
    if (c && this.fresh(c)) return c;
    if (c && !this.reloading) {
      this.reloading = true;
      const next = this.shared();
      next.then(
        () => {
          this.current = next;
          this.reloading = false;
        },
        () => {
          this.reloading = false;
        },
      );
      return c;
    }
    if (c) return c;
    return this.track(this.shared());
  }

  /** Rebuilds from the warehouse now, and shares the result. */
  refresh(): Promise<Catalog> {
    return this.track(this.rebuild());
  }

  private fresh(c: Catalog): boolean {
    return Date.now() - c.builtAt < this.maxAgeMs;
  }

  private async shared(): Promise<Catalog> {
    const { store, key } = this.opts;
    if (store && key) {
      const stored = await store.read(key).catch((err: unknown) => {
        this.opts.onStoreError?.(err);
        return undefined;
      });
      if (stored && this.fresh(stored)) return stored;
    }
    return this.rebuild();
  }

  private async rebuild(): Promise<Catalog> {
    const c = await this.build();
    const { store, key } = this.opts;
    if (store && key) await store.write(key, c).catch((err: unknown) => this.opts.onStoreError?.(err));
    return c;
  }

  private track(p: Promise<Catalog>): Promise<Catalog> {
    this.current = p;
    p.catch(() => {
      if (this.current === p) this.current = undefined;
    });
    return p;
  }
}
