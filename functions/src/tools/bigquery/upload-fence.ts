/**
 * The BigQuery engine's view of the uploads dataset (QUARRY_BQ_UPLOADS_DATASET): a conversation's
 * own uploads (`ctx.uploads` / `caller.uploads`) are readable, listed and described; every other
 * table there is, for every scope, a table that does not exist — refused before the dry run, so no
 * engine error ever describes another conversation's file. Without a caller (the shared catalog)
 * nothing of the dataset is seen.
 */
import type { NotFound } from "../scope-gate";
import { refuseOtherUploadTables, refuseOtherUploads } from "../scope-gate";
import type { Caller, TableInfo, TableSchema } from "../types";
import type { UploadRef } from "../uploads/types";
import { bigQueryType, resolveUploadsDataset } from "./upload-tables";

export class UploadFence {
  /** The dataset (`project.dataset` and its bare id); undefined: uploads not configured. */
  private readonly ds?: { qualified: string; dataset: string };

  constructor(setting: string | undefined, billingProject: string) {
    const up = resolveUploadsDataset(setting, billingProject);
    if (up) this.ds = { qualified: `${up.projectId}.${up.datasetId}`, dataset: up.datasetId };
  }

  /** Whether `projectDataset` (`project.dataset`) is the uploads dataset. */
  isUploads(projectDataset: string): boolean {
    return this.ds !== undefined && projectDataset === this.ds.qualified;
  }

  /** The caller's uploads that are tables of the uploads dataset (none without one configured). */
  own(who: Pick<Caller, "uploads"> | undefined): readonly UploadRef[] {
    const ds = this.ds;
    if (!ds) return [];
    return (who?.uploads ?? []).filter(
      (u) => u.location.startsWith(`${ds.qualified}.`) && u.location.split(".").length === 3,
    );
  }

  /** Before the engine: any other table of the uploads dataset `text` names is not found. */
  refuseNames(text: string, own: readonly string[], notFound: NotFound): void {
    if (this.ds) refuseOtherUploads(text, this.ds, own, notFound);
  }

  /** After the dry run: any other table of the uploads dataset it reads is not found. */
  refuseTables(tables: readonly string[], own: readonly string[], notFound: NotFound): void {
    if (this.ds) refuseOtherUploadTables(tables, this.ds, own, notFound);
  }

  /** list_tables' lines for the caller's uploads. */
  infos(caller: Caller | undefined): TableInfo[] {
    return this.own(caller).map(uploadInfo);
  }

  /** The caller's upload `id`, described from its record (no API call); any other is not found. */
  describe(id: string, caller: Caller | undefined, notFound: NotFound): TableSchema {
    const own = this.own(caller);
    const upload = own.find((u) => u.location.toLowerCase() === id.toLowerCase());
    if (!upload) {
      const ref = { dataset: this.ds!.qualified, table: id.split(".")[2], datasetSeen: own.length > 0 };
      throw notFound(ref, { line: 1, column: 1 });
    }
    return {
      ...uploadInfo(upload),
      columns: upload.columns.map((c) => ({ name: c.name, type: bigQueryType(c.type), mode: "NULLABLE" })),
      sampleRows: [],
    };
  }
}

/** How list_tables shows a conversation's upload: its id, and which file of the person's it is. */
function uploadInfo(u: UploadRef): TableInfo {
  return {
    id: u.location,
    description: `uploads.${u.name}: the person's file ${u.file}, ${u.rows} rows`,
    rowCount: u.rows,
  };
}
