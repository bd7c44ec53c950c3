/**
 * The conversation's files as tables (`/threads/:id/files`): list, delete, and upload — the file's
 * bytes as the body, a large CSV/TSV gzip-compressed in the browser first, with progress. Sizes are
 * checked from `File.size` before a byte is read (`data/attachments.ts` uploadPlan).
 */
import type { Auth } from "firebase/auth";
import { UPLOAD_BODY_MAX_BYTES, type UploadedFile } from "@quarry/functions/contract";
import { apiRequest } from "../api/client";
import { bodyTooLarge, uploadPlan } from "../data/attachments";

const path = (threadId: string, name?: string) =>
  `/threads/${encodeURIComponent(threadId)}/files${name ? `/${encodeURIComponent(name)}` : ""}`;

/** The conversation's uploaded files (`GET /threads/:id/files`). */
export async function listFiles(apiUrl: string, auth: Auth, threadId: string): Promise<UploadedFile[]> {
  return (await apiRequest<{ files: UploadedFile[] }>(apiUrl, auth, path(threadId))).files;
}

/** Removes a file and its table from the conversation (`DELETE /threads/:id/files/:name`). */
export async function deleteFile(apiUrl: string, auth: Auth, threadId: string, name: string): Promise<void> {
  await apiRequest<void>(apiUrl, auth, path(threadId, name), { method: "DELETE" });
}

/** Where an upload is: compressing in the page, sending (with the share sent), or being read into a table. */
export type UploadStage =
  { stage: "compressing" } | { stage: "sending"; percent: number } | { stage: "reading" };

/** The file gzip-compressed by the browser's own CompressionStream (streamed, never read whole first). */
function gzip(file: Blob): Promise<Blob> {
  return new Response(file.stream().pipeThrough(new CompressionStream("gzip"))).blob();
}

/** A POST with upload progress (fetch has none); rejects as `apiRequest` does ("HTTP 413: {...}"). */
function send(
  url: string,
  token: string,
  contentType: string,
  body: Blob,
  onStage: (s: UploadStage) => void,
): Promise<UploadedFile> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", url);
    xhr.setRequestHeader("Authorization", `Bearer ${token}`);
    xhr.setRequestHeader("Content-Type", contentType);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onStage({ stage: "sending", percent: Math.round((100 * e.loaded) / e.total) });
    };
    xhr.upload.onload = () => onStage({ stage: "reading" });
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        resolve((JSON.parse(xhr.responseText) as { file: UploadedFile }).file);
      } else {
        reject(Object.assign(new Error(`HTTP ${xhr.status}: ${xhr.responseText}`), { status: xhr.status }));
      }
    };
    xhr.onerror = () => reject(new Error("Failed to fetch: the upload did not reach Quarry's server."));
    xhr.send(body);
  });
}

/**
 * Uploads a table file to the conversation (creating the thread when it does not exist yet);
 * `sheet` picks an Excel sheet. Throws an Error whose message says why, before sending anything
 * when the file is too large or of a kind the API does not read.
 */
export async function uploadFile(
  apiUrl: string,
  auth: Auth,
  threadId: string,
  file: File,
  opts: { uploadMaxMb: number; sheet?: string; onStage(s: UploadStage): void },
): Promise<UploadedFile> {
  const plan = uploadPlan(file, opts.uploadMaxMb);
  if (!plan.ok) throw new Error(plan.error);
  const user = auth.currentUser;
  if (!user) throw new Error("You are signed out. Sign in again to continue.");
  let body: Blob = file;
  if (plan.gzip) {
    opts.onStage({ stage: "compressing" });
    body = await gzip(file);
    if (body.size > UPLOAD_BODY_MAX_BYTES) throw new Error(bodyTooLarge(file.name, body.size));
  }
  const query = new URLSearchParams({ name: file.name, ...(opts.sheet ? { sheet: opts.sheet } : {}) });
  opts.onStage({ stage: "sending", percent: 0 });
  return send(
    `${apiUrl}${path(threadId)}?${query}`,
    await user.getIdToken(),
    plan.contentType,
    body,
    opts.onStage,
  );
}
