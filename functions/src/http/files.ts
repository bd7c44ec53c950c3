/**
 * `/threads/:id/files`: a person brings a file (CSV, TSV, Excel, Parquet) into a conversation as
 * the table `uploads.<name>`. The body is the file itself; it is read in a bounded child process
 * (tools/uploads/ingest.ts), put in place by the engine (a Parquet file for DuckDB, a load job for
 * BigQuery), then recorded on the thread in one transaction — when any step fails, what an earlier
 * step made is removed, so nothing is half-stored. Uploads count against the day's bytes, and every
 * one, kept or refused, is on the audit log.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import express, { Router, type Request, type Response } from "express";
import * as logger from "firebase-functions/logger";
import { config } from "../config";
import { UPLOAD_BODY_MAX_BYTES, type UploadedFile } from "../contract/uploads";
import { QuarryError } from "../errors";
import { accessStores } from "../access/gate";
import type { UploadAudit } from "../access/audit";
import { runCallerOf } from "../access/caller";
import { fileStore, threadStore, uploadTarget, checkpointSaver } from "../runs/runtime";
import { rootCommit } from "../runs/checkpointer";
import { ThreadIdParam, parse } from "../runs/schemas";

type RunCaller = ReturnType<typeof runCallerOf>;

export function fileRoutes(): Router {
  const r = Router();
  // The platform has read the body already (req.rawBody); this covers a server that has not.
  const raw = express.raw({ type: () => true, limit: UPLOAD_BODY_MAX_BYTES });
  r.post("/threads/:threadId/files", raw, uploadFile);
  r.get("/threads/:threadId/files", listFiles);
  r.delete("/threads/:threadId/files/:name", deleteFile);
  return r;
}

function threadParam(req: Request): string {
  return parse(ThreadIdParam, req.params.threadId, "path");
}

/** The file's name as the person gave it (`?name=`), required: it decides the table's name and format. */
function fileNameOf(req: Request): string {
  const name = typeof req.query.name === "string" ? path.basename(req.query.name.trim()) : "";
  if (!name || name.length > 255) {
    throw new QuarryError(
      "bad_request:upload",
      "Name the file: POST /threads/:id/files?name=targets.csv (at most 255 characters), with the file as the body.",
    );
  }
  return name;
}

function bodyOf(req: Request): Buffer {
  const raw = (req as Request & { rawBody?: Buffer }).rawBody;
  const body = raw ?? (Buffer.isBuffer(req.body) ? (req.body as Buffer) : undefined);
  if (!body?.length)
    throw new QuarryError("bad_request:upload", "The file is empty: send its bytes as the body.");
  return body;
}

async function uploadFile(req: Request, res: Response): Promise<void> {
  const caller = runCallerOf(req);
  const threadId = threadParam(req);
  const fileName = fileNameOf(req);
  const sheet = typeof req.query.sheet === "string" && req.query.sheet ? req.query.sheet : undefined;
  const body = bodyOf(req);
  const { tableNameFor } = await import("../tools/uploads/ingest.js");
  const name = tableNameFor(fileName);
  const cfg = config().uploads;
  const files = await fileStore();
  const audit: Omit<UploadAudit, "outcome" | "rows" | "table"> = {
    kind: "upload",
    uid: caller.uid,
    email: caller.email,
    threadId,
    file: fileName,
    bytes: body.length,
  };
  try {
    const { quotas } = await accessStores();
    const who = { uid: caller.uid, email: caller.email, ...(caller.via ? { via: "mcp" as const } : {}) };
    // Refused before the file is read: not the caller's thread, full, name taken, or over the day's bytes.
    const [exists] = await Promise.all([
      files.check(threadId, caller.uid, name, cfg.maxFiles),
      quotas.admitUpload(who, caller.access.limits, body.length),
    ]);
    const file = await ingestAndKeep(caller, threadId, {
      newThread: !exists,
      fileName,
      name,
      sheet,
      body,
      contentType: req.get("content-type"),
    });
    await record({ ...audit, table: file.table, rows: file.rows, bytes: file.bytes, outcome: "ok" });
    await quotas.charge(who, { bytes: file.bytes, tokens: 0 }).catch((err: unknown) => {
      logger.error("upload bytes not charged", { err: String(err), threadId });
    });
    res.status(201).json({ file });
  } catch (err) {
    const e = err instanceof QuarryError ? err : undefined;
    await record({
      ...audit,
      table: "",
      rows: 0,
      outcome: e && e.area !== "internal" ? "refused" : "error",
      error: { code: e?.code ?? "internal", message: e?.message ?? String(err) },
    });
    throw err;
  }
}

/** Reads the file, puts the table in place and records it; on any failure removes what was made. */
async function ingestAndKeep(
  caller: RunCaller,
  threadId: string,
  input: {
    newThread: boolean;
    fileName: string;
    name: string;
    sheet?: string;
    body: Buffer;
    contentType?: string;
  },
): Promise<UploadedFile> {
  const cfg = config().uploads;
  const work = await mkdtemp(path.join(os.tmpdir(), "quarry-ingest-"));
  try {
    const srcPath = path.join(work, `source-${randomUUID().slice(0, 8)}`);
    await writeFile(srcPath, input.body);
    const { ingestUpload } = await import("../tools/uploads/ingest.js");
    const result = await ingestUpload({
      srcPath,
      fileName: input.fileName,
      ...(input.contentType ? { contentType: input.contentType } : {}),
      ...(input.sheet ? { sheet: input.sheet } : {}),
      outDir: work,
      limits: { maxBytes: cfg.maxMb * 1024 * 1024, maxRows: cfg.maxRows, maxColumns: cfg.maxColumns },
    });
    const now = new Date();
    const expiresAt = new Date(now.getTime() + cfg.ttlDays * 86_400_000);
    if (input.newThread) await createThread(threadId, caller.uid);
    const target = await uploadTarget();
    const location = await target.put(
      {
        parquetPath: result.parquetPath,
        columns: result.columns,
        rows: result.rows,
        userId: caller.uid,
        userEmail: caller.email,
        threadId,
        name: input.name,
        file: input.fileName,
        expiresAt,
      },
      { userId: caller.uid },
    );
    const file: UploadedFile = {
      name: input.name,
      table: target.tableId(location, input.name),
      file: input.fileName,
      format: result.format,
      columns: result.columns,
      rows: result.rows,
      bytes: input.body.length,
      uploadedAt: now.toISOString(),
      expiresAt: expiresAt.toISOString(),
      preview: result.preview,
      warnings: result.warnings,
      ...(result.dialect ? { dialect: result.dialect } : {}),
      ...(result.sheet ? { sheet: result.sheet, sheets: result.sheets ?? [result.sheet] } : {}),
    };
    try {
      await (await fileStore()).add(threadId, caller.uid, { ...file, location }, cfg.maxFiles);
    } catch (err) {
      await target.drop(location, { userId: caller.uid }).catch(() => undefined);
      throw err;
    }
    return file;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * A file may be the first thing in a conversation: the thread is created, owned by the caller (if
 * it was created meanwhile, by them, it is kept; by someone else, 409).
 */
async function createThread(threadId: string, uid: string): Promise<void> {
  const [store, saver] = await Promise.all([threadStore(), checkpointSaver()]);
  await store.create(threadId, uid, {}, "do_nothing", rootCommit(saver, threadId));
}

async function listFiles(req: Request, res: Response): Promise<void> {
  const { uid } = runCallerOf(req);
  res.json({ files: await (await fileStore()).list(threadParam(req), uid) });
}

async function deleteFile(req: Request, res: Response): Promise<void> {
  const { uid } = runCallerOf(req);
  const threadId = threadParam(req);
  const location = await (await fileStore()).remove(threadId, uid, String(req.params.name));
  await (await uploadTarget()).drop(location, { userId: uid });
  res.status(204).end();
}

async function record(entry: UploadAudit): Promise<void> {
  const { audit } = await accessStores();
  await audit.record(entry).catch((err: unknown) => {
    logger.error("audit entry not written", { err: String(err), threadId: entry.threadId });
  });
}
