/**
 * Files a person brings into one conversation as tables (`uploads.<name>`): what the ingest step
 * makes of a file, and what a run carries so the warehouse, the gate and the prompt see that
 * conversation's uploads — and no other's.
 */
import type { ColumnInfo, Row } from "../../contract/events";

/** The formats a file may come in. */
export type UploadFormat = "csv" | "tsv" | "xlsx" | "parquet";

/** The bounds one ingest works within (from QUARRY_UPLOAD_*). */
export interface UploadLimits {
  /** Largest file, uncompressed, in bytes. */
  maxBytes: number;
  maxRows: number;
  maxColumns: number;
}

/** What ingesting one file produced: a Parquet file with typed columns, ready for either engine. */
export interface IngestResult {
  format: UploadFormat;
  /** The Parquet file written (in the ingest's output directory). */
  parquetPath: string;
  /** Column names as stored (sanitised identifiers) with DuckDB's types. */
  columns: ColumnInfo[];
  rows: number;
  /** The first rows (at most 5), JSON-safe, for the person to check the reading. */
  preview: Row[];
  /** Problems the file was loaded with, in words naming the line or cell (e.g. a formula's cached value). */
  warnings: string[];
  /** xlsx: the workbook's sheets, and the one that was read. */
  sheets?: string[];
  sheet?: string;
  /** What decided the reading, in words (delimiter, header, encoding, date format). */
  dialect?: string;
}

/**
 * One of a conversation's uploaded tables, as a run carries it (RunPerson → QueryContext/Caller):
 * enough for the engine to attach it and the prompt to name it, nothing about other threads.
 */
export interface UploadRef {
  /** The table name inside `uploads` (a lower-case identifier). */
  name: string;
  /** The file it came from, as the person named it. */
  file: string;
  /** How SQL names it: `uploads.<name>` (DuckDB) or `project.dataset.table` (BigQuery). */
  table: string;
  /** DuckDB: the Parquet file's absolute path. BigQuery: `project.dataset.table`. */
  location: string;
  columns: ColumnInfo[];
  rows: number;
}
