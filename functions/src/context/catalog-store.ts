/**
 * The schema catalog shared across function instances: one Firestore document per warehouse
 * (`{collection}/{key}`: when it was built, how many parts) and its gzip'd JSON in parts of at most
 * 900 KB as Bytes (`{collection}/{key}/parts/{i}`), so a catalog of thousands of tables stays under
 * Firestore's 1 MiB per document. A new instance reads it in two round trips instead of listing and
 * describing the warehouse; the head document is written last, so a reader never sees a catalog
 * whose parts are not all there.
 */
import { createHash } from "node:crypto";
import { gunzipSync, gzipSync } from "node:zlib";
import type { Firestore } from "@google-cloud/firestore";
import type { WarehouseConfig } from "../config";
import type { Catalog, CatalogStore, DeclaredJoin } from "./catalog";

export type { CatalogStore };

const PART_BYTES = 900_000;
const VERSION = 1;

/** A Firestore document id for a warehouse's settings (engine, project, datasets or file). */
export function catalogKey(parts: unknown): string {
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, 32);
}

/**
 * The key the function uses for a warehouse: what decides its tables (engine, and the project and
 * datasets, or the DuckDB file and registered files), the authored notes applied to them and the
 * joins declared on them.
 */
export function warehouseCatalogKey(
  warehouse: WarehouseConfig,
  notes: Record<string, string>,
  joins: readonly DeclaredJoin[] = [],
): string {
  const where =
    warehouse.engine === "bigquery"
      ? { project: warehouse.bigquery.billingProject, datasets: warehouse.bigquery.datasets }
      : { path: warehouse.duckdb.path ?? "sample", files: warehouse.duckdb.files };
  // Without declared joins the key is as it was, so catalogs already stored stay valid.
  return catalogKey({ engine: warehouse.engine, ...where, notes, ...(joins.length ? { joins } : {}) });
}

export class FirestoreCatalogStore implements CatalogStore {
  constructor(
    private readonly db: Firestore,
    private readonly collection = "catalogs",
  ) {}

  async read(key: string): Promise<Catalog | undefined> {
    const head = await this.db.collection(this.collection).doc(key).get();
    const meta = head.data() as { version?: number; parts?: number; builtAt?: number } | undefined;
    if (!meta || meta.version !== VERSION || !meta.parts || !meta.builtAt) return undefined;
    const refs = Array.from({ length: meta.parts }, (_, i) => head.ref.collection("parts").doc(String(i)));
    const snaps = await this.db.getAll(...refs);
    if (snaps.some((s) => !s.exists || (s.get("builtAt") as number) !== meta.builtAt)) return undefined;
    const zipped = Buffer.concat(snaps.map((s) => Buffer.from(s.get("data") as Uint8Array)));
    return JSON.parse(gunzipSync(zipped).toString("utf8")) as Catalog;
  }

  async write(key: string, catalog: Catalog): Promise<void> {
    const zipped = gzipSync(JSON.stringify(catalog));
    const head = this.db.collection(this.collection).doc(key);
    const parts: Buffer[] = [];
    for (let i = 0; i < zipped.length; i += PART_BYTES) parts.push(zipped.subarray(i, i + PART_BYTES));
    // Parts first (a few per commit: the emulator refuses requests over 4 MiB), the head last.
    for (let i = 0; i < parts.length; i += 3) {
      const batch = this.db.batch();
      parts.slice(i, i + 3).forEach((data, j) => {
        batch.set(head.collection("parts").doc(String(i + j)), { data, builtAt: catalog.builtAt });
      });
      await batch.commit();
    }
    await head.set({
      version: VERSION,
      parts: parts.length,
      builtAt: catalog.builtAt,
      tables: catalog.tables.length,
    });
  }
}
