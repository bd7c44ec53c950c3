/**
 * `npm run catalog -- refresh | show`
 *
 * The schema catalog the function shares through Firestore (`catalogs/{key}`): `refresh` rebuilds
 * it now from the warehouse's metadata and stores it under the key the function uses (same
 * settings: QUARRY_WAREHOUSE, QUARRY_BQ_DATASETS / QUARRY_DUCKDB_PATH, the context files), so every
 * instance picks it up on its next read — e.g. after adding tables, instead of waiting
 * QUARRY_CATALOG_MAX_AGE_MINUTES; `show` prints what is stored. Locally set FIRESTORE_EMULATOR_HOST
 * (the stack prints it); in production it uses your gcloud credentials and GOOGLE_CLOUD_PROJECT.
 */
import { readConfig } from "../functions/src/config";
import {
  FirestoreCatalogStore,
  buildCatalog,
  loadKnowledge,
  warehouseCatalogKey,
} from "../functions/src/context";
import { closeWarehouses, getWarehouse } from "../functions/src/tools";
import { commandFirestore, runCommand } from "./cli";

async function main(): Promise<number> {
  const command = process.argv[2];
  if (command !== "refresh" && command !== "show") {
    console.error("Usage: npm run catalog -- refresh | show");
    return 2;
  }
  const cfg = readConfig({ GOOGLE_CLOUD_PROJECT: "demo-quarry", ...process.env });
  const db = commandFirestore(cfg);
  try {
    const warehouse = await getWarehouse(cfg.warehouse);
    const { knowledge } = await loadKnowledge(cfg.contextDir, warehouse);
    const notes = knowledge.allNotes();
    const joins = knowledge.declaredJoins();
    const key = warehouseCatalogKey(cfg.warehouse, notes, joins);
    const store = new FirestoreCatalogStore(db, cfg.catalogsCollection);
    if (command === "refresh") {
      const started = Date.now();
      const catalog = await buildCatalog(warehouse, notes, { joins });
      await store.write(key, catalog);
      console.log(
        `Stored the catalog of ${catalog.tables.length} tables as ${cfg.catalogsCollection}/${key} (${Date.now() - started} ms).`,
      );
    } else {
      const catalog = await store.read(key);
      if (!catalog) console.log(`No catalog stored for these settings (${cfg.catalogsCollection}/${key}).`);
      else {
        console.log(
          `${cfg.catalogsCollection}/${key}: ${catalog.tables.length} tables, built ${new Date(catalog.builtAt).toISOString()}`,
        );
        for (const t of catalog.tables)
          console.log(
            `- ${t.id} (${t.columns.length} columns${t.rowCount !== undefined ? `, ${t.rowCount} rows` : ""})`,
          );
      }
    }
    return 0;
  } finally {
    await db.terminate();
    await closeWarehouses();
  }
}

runCommand("catalog", main);
