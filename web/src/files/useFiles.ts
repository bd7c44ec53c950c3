/**
 * The open conversation's files as tables: loaded when a thread opens, uploads in progress with
 * their stage, errors in words, delete, and another sheet of a workbook (re-upload replacing it).
 */
import { useCallback, useEffect, useRef, useState } from "react";
import type { Auth } from "firebase/auth";
import type { UploadedFile } from "@quarry/functions/contract";
import { errorInWords, parseApiError } from "../data/format";
import { deleteFile, listFiles, uploadFile, type UploadStage } from "./api";

/** An upload under way, as the panel shows it. */
export interface PendingUpload {
  id: string;
  name: string;
  stage: UploadStage;
}

export interface FilesApi {
  files: UploadedFile[];
  pending: PendingUpload[];
  errors: { id: string; message: string }[];
  /** Uploads a table file (a new conversation gets its thread from the upload). */
  upload(file: File): Promise<void>;
  remove(name: string): Promise<void>;
  /** Reads another sheet of a workbook uploaded in this page: delete, then upload with `sheet`. */
  pickSheet(name: string, sheet: string): Promise<void>;
  /** Whether the workbook's bytes are still in this page (another sheet can be read). */
  canPickSheet(name: string): boolean;
  dismiss(id: string): void;
}

interface Options {
  apiUrl: string;
  auth: Auth;
  threadId: string | null;
  uploadMaxMb: number;
  /** An upload created the conversation: the page opens it. */
  onThreadCreated(id: string): void;
}

/** Loads a thread's files into `set` (none for no thread); the returned function drops a late answer. */
function loadFiles(
  apiUrl: string,
  auth: Auth,
  threadId: string | null,
  set: (files: UploadedFile[]) => void,
  fail: (e: unknown) => void,
): () => void {
  set([]);
  if (!threadId) return () => undefined;
  let live = true;
  listFiles(apiUrl, auth, threadId)
    .then((fs) => live && set(fs))
    .catch((e: unknown) => {
      // A conversation nobody has asked in yet has no files (and may not exist).
      if (live && parseApiError(e).status !== 404) fail(e);
    });
  return () => {
    live = false;
  };
}

/** The panel's errors, in words, each dismissed on its own. */
function useErrors() {
  const [errors, setErrors] = useState<{ id: string; message: string }[]>([]);
  const fail = useCallback((e: unknown) => {
    setErrors((es) => [...es, { id: crypto.randomUUID(), message: errorInWords(e) }]);
  }, []);
  const clear = useCallback(() => setErrors([]), []);
  const dismiss = (id: string) => setErrors((es) => es.filter((e) => e.id !== id));
  return { errors, fail, clear, dismiss };
}

/** The files panel's state and actions for the open thread. */
export function useFiles({ apiUrl, auth, threadId, uploadMaxMb, onThreadCreated }: Options): FilesApi {
  const [files, setFiles] = useState<UploadedFile[]>([]);
  const [pending, setPending] = useState<PendingUpload[]>([]);
  const { errors, fail, clear, dismiss } = useErrors();
  /** Workbooks uploaded in this page, by table name: another sheet needs the bytes again. */
  const sources = useRef(new Map<string, File>());
  const current = useRef(threadId);
  current.current = threadId;

  useEffect(() => {
    clear();
    return loadFiles(apiUrl, auth, threadId, setFiles, fail);
  }, [apiUrl, auth, threadId, fail, clear]);

  const put = useCallback(
    async (file: File, sheet?: string) => {
      const id = crypto.randomUUID();
      const thread = current.current ?? crypto.randomUUID();
      const stage = (s: UploadStage) =>
        setPending((ps) => ps.map((p) => (p.id === id ? { ...p, stage: s } : p)));
      setPending((ps) => [...ps, { id, name: file.name, stage: { stage: "sending", percent: 0 } }]);
      try {
        const f = await uploadFile(apiUrl, auth, thread, file, { uploadMaxMb, sheet, onStage: stage });
        if (f.sheets && f.sheets.length > 1) sources.current.set(f.name, file);
        if (current.current === thread) setFiles((fs) => [...fs.filter((x) => x.name !== f.name), f]);
        if (!current.current) onThreadCreated(thread);
      } catch (e) {
        fail(e);
      } finally {
        setPending((ps) => ps.filter((p) => p.id !== id));
      }
    },
    [apiUrl, auth, uploadMaxMb, onThreadCreated, fail],
  );

  const remove = useCallback(
    async (name: string) => {
      const thread = current.current;
      if (!thread) return;
      try {
        await deleteFile(apiUrl, auth, thread, name);
        sources.current.delete(name);
        setFiles((fs) => fs.filter((f) => f.name !== name));
      } catch (e) {
        fail(e);
      }
    },
    [apiUrl, auth, fail],
  );

  const pickSheet = useCallback(
    async (name: string, sheet: string) => {
      const file = sources.current.get(name);
      const thread = current.current;
      if (!file || !thread) return;
      try {
        await deleteFile(apiUrl, auth, thread, name);
        setFiles((fs) => fs.filter((f) => f.name !== name));
      } catch (e) {
        return fail(e);
      }
      await put(file, sheet);
    },
    [apiUrl, auth, put, fail],
  );

  return {
    files,
    pending,
    errors,
    upload: (file) => put(file),
    remove,
    pickSheet,
    canPickSheet: (name) => sources.current.has(name),
    dismiss,
  };
}
