/**
 * Files brought into a conversation as tables (`/threads/:id/files`): what the API answers about
 * one, so the page can show its columns, types and first rows.
 */
import type { ColumnInfo, Row } from "./events";

/** A request body larger than this must be sent gzip-compressed (`Content-Type: application/gzip`). */
export const UPLOAD_BODY_MAX_BYTES = 31 * 1024 * 1024;

/** One uploaded file of a conversation (`POST` answers `{ file }`, `GET` answers `{ files }`). */
export interface UploadedFile {
  /** The table's name inside `uploads`, and the file's name in `/threads/:id/files/:name`. */
  name: string;
  /** How the model and SQL name it: `uploads.<name>` (DuckDB) or `project.dataset.table` (BigQuery). */
  table: string;
  /** The file as the person named it. */
  file: string;
  format: "csv" | "tsv" | "xlsx" | "parquet";
  columns: ColumnInfo[];
  rows: number;
  /** The file's size as sent (uncompressed). */
  bytes: number;
  uploadedAt: string;
  expiresAt: string;
  /** The first rows (at most 5). */
  preview: Row[];
  /** Problems it was loaded with, in words (a formula's cached value, Latin-1 text …). */
  warnings: string[];
  /** What decided the reading (delimiter, header, date format). */
  dialect?: string;
  /** Excel: the sheet read and the workbook's sheets. */
  sheet?: string;
  sheets?: string[];
}
