/** BigQuery engine (in progress). */
import type { WarehouseConfig } from "../../config";
import { WarehouseError, type Warehouse } from "../types";

export class BigQueryWarehouse {
  static async create(_cfg: WarehouseConfig): Promise<Warehouse> {
    throw new WarehouseError(
      "internal",
      "The BigQuery engine is not available yet; set QUARRY_WAREHOUSE=duckdb.",
    );
  }
}
