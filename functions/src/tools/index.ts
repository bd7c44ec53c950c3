/**
 * Public API of the warehouse layer. The engines (DuckDB's native binding, the BigQuery client)
 * load with a dynamic import on first use (open.ts), never on the function entry's load path.
 */

export { createWarehouseTools } from "./model-tools";
export { MAX_SQL_CHARS } from "./policy";
export { auditedWarehouse } from "./audited";
export * from "./types";
export { closeWarehouses, getWarehouse } from "./open";
