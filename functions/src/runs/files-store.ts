/**
 * A conversation's uploaded files in Firestore: the full record in `threads/{id}/files/{name}`
 * (server-only) and the compact reference runs need in the thread document's `uploads` map, written
 * together in one transaction that re-checks the owner, the thread not being deleted, the name and
 * the number of files — so two uploads at once cannot exceed the limit or take one name twice.
 */
import type { DocumentReference, Firestore, Timestamp } from "firebase-admin/firestore";
import type { UploadedFile } from "../contract/uploads";
import { QuarryError } from "../errors";
import type { UploadRef } from "../tools/uploads/types";
import { notFound, ownedBy, uploadsOf, type ThreadDoc } from "./thread-doc";

/** A file's record as stored (`UploadedFile` with Firestore times and where the table lives). */
type FileDoc = Omit<UploadedFile, "uploadedAt" | "expiresAt"> & {
  location: string;
  uploadedAt: Timestamp;
  expiresAt: Timestamp;
  /** For the Firestore TTL policy (same as expiresAt). */
  expireAt: Timestamp;
};

export class FileStore {
  constructor(
    private readonly db: Firestore,
    private readonly threads: string,
    private readonly fieldValue: typeof import("firebase-admin/firestore").FieldValue,
    private readonly timestamp: typeof import("firebase-admin/firestore").Timestamp,
  ) {}

  private thread(id: string): DocumentReference {
    return this.db.collection(this.threads).doc(id);
  }

  private file(id: string, name: string): DocumentReference {
    return this.thread(id).collection("files").doc(name);
  }

  /**
   * Refuses an upload that cannot be kept (before the file is read): not the owner's, deleting,
   * full, name taken. Answers whether the thread exists (a new one is created with the upload).
   */
  async check(threadId: string, uid: string, name: string, maxFiles: number): Promise<boolean> {
    const snap = await this.thread(threadId).get();
    if (snap.exists) refuseUpload(threadId, ownedBy(threadId, snap, uid), name, maxFiles);
    return snap.exists;
  }

  /** Keeps an ingested file: its record and the thread's reference, or throws and keeps nothing. */
  async add(
    threadId: string,
    uid: string,
    file: UploadedFile & { location: string },
    maxFiles: number,
  ): Promise<void> {
    const ref: UploadRef = {
      name: file.name,
      file: file.file,
      table: file.table,
      location: file.location,
      columns: file.columns,
      rows: file.rows,
    };
    const expiresAt = this.timestamp.fromDate(new Date(file.expiresAt));
    const doc: FileDoc = {
      ...file,
      uploadedAt: this.timestamp.fromDate(new Date(file.uploadedAt)),
      expiresAt,
      expireAt: expiresAt,
    };
    await this.db.runTransaction(async (tx) => {
      const snap = await tx.get(this.thread(threadId));
      if (!snap.exists) throw notFound(threadId);
      refuseUpload(threadId, ownedBy(threadId, snap, uid), file.name, maxFiles);
      tx.set(this.file(threadId, file.name), doc); // over an expired record of the same name
      tx.update(this.thread(threadId), { [`uploads.${file.name}`]: { ...ref, expiresAt } });
    });
  }

  /** The thread's files that have not expired, by name. */
  async list(threadId: string, uid: string): Promise<UploadedFile[]> {
    const thread = await this.thread(threadId).get();
    ownedBy(threadId, thread, uid);
    const snap = await this.thread(threadId).collection("files").get();
    const now = Date.now();
    return snap.docs
      .map((d) => d.data() as FileDoc)
      .filter((d) => d.expiresAt.toMillis() > now)
      .map(toUploadedFile)
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Forgets one file; answers where its table was, for the engine to drop. */
  async remove(threadId: string, uid: string, name: string): Promise<string> {
    return this.db.runTransaction(async (tx) => {
      const snap = await tx.get(this.thread(threadId));
      ownedBy(threadId, snap, uid);
      const file = await tx.get(this.file(threadId, name));
      if (!file.exists) throw missing(name);
      tx.delete(this.file(threadId, name));
      tx.update(this.thread(threadId), { [`uploads.${name}`]: this.fieldValue.delete() });
      return (file.data() as FileDoc).location;
    });
  }

  /** Every table location the thread's files use (for deleting the thread), expired ones included. */
  async locations(threadId: string): Promise<string[]> {
    const [snap, thread] = await Promise.all([
      this.thread(threadId).collection("files").get(),
      this.thread(threadId).get(),
    ]);
    const doc = thread.data() as ThreadDoc | undefined;
    const fromDoc = Object.values(doc?.uploads ?? {}).map((u) => u.location);
    return [...new Set([...snap.docs.map((d) => (d.data() as FileDoc).location), ...fromDoc])];
  }
}

function refuseUpload(threadId: string, doc: ThreadDoc, name: string, maxFiles: number): void {
  if (doc.deleting) {
    throw new QuarryError("conflict:upload", `Conversation ${threadId} is being deleted; start a new one.`);
  }
  const current = uploadsOf(doc);
  if (current.some((u) => u.name === name)) {
    throw new QuarryError(
      "conflict:upload",
      `This conversation already has a file as uploads.${name}; delete that one first, or upload this one under another name.`,
    );
  }
  if (current.length >= maxFiles) {
    throw new QuarryError(
      "conflict:upload",
      `This conversation already holds ${current.length} files, the most it may (QUARRY_UPLOAD_MAX_FILES); delete one or start a new conversation.`,
    );
  }
}

function missing(name: string): QuarryError {
  return new QuarryError("not_found:upload", `This conversation has no uploaded file "${name}".`);
}

function toUploadedFile(d: FileDoc): UploadedFile {
  const { location: _l, expireAt: _e, uploadedAt, expiresAt, ...rest } = d;
  return {
    ...rest,
    uploadedAt: uploadedAt.toDate().toISOString(),
    expiresAt: expiresAt.toDate().toISOString(),
  };
}
