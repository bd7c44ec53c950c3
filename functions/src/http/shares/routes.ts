/**
 * Shared conversations (docs/api.md, docs/access.md#shared-conversations): the owner of a thread
 * makes links to it, lists and revokes them (`/threads/:id/shares`); a member with a link reads the
 * conversation (`GET /shares/:id`) or continues it in a thread of their own
 * (`POST /shares/:id/continue`) — only when their data scope covers everything it used. Someone
 * else's thread, an unknown or revoked link and a conversation the viewer's scope does not cover
 * all answer the same 404 `not_found:thread` as a missing conversation, and store nothing.
 */
import { randomUUID } from "node:crypto";
import { Router, type Request, type Response } from "express";
import type { ShareAction } from "../../contract/admin";
import type { ContinuedShare, SharedConversation, SharesAnswer } from "../../contract/shares";
import { accessStores } from "../../access/gate";
import { callerOf, runCallerOf } from "../../access/caller";
import { personScope } from "../../identity";
import { firestore } from "../../services";
import { agentGraph, checkpointSaver, graphFactory, threadStore } from "../../runs/runtime";
import { rootCommit } from "../../runs/checkpointer";
import { ThreadIdParam, parse } from "../../runs/schemas";
import { toPlain } from "../../runs/serialize";
import { notFound, threadValues, type ThreadDoc } from "../../runs/thread-doc";
import { FULL_SCOPE } from "../../tools/scope";
import { scopeCovers } from "./check";
import { ShareStore, type ShareDoc } from "./store";
import { sharedTranscript } from "./transcript";

let shares:
  Promise<{ store: ShareStore; now: () => import("firebase-admin/firestore").Timestamp }> | undefined;

function shareStore() {
  shares ??= Promise.all([firestore(), import("firebase-admin/firestore")]).then(([db, mod]) => ({
    store: new ShareStore(db, mod.Timestamp),
    now: () => mod.Timestamp.now(),
  }));
  return shares;
}

export function shareRoutes(): Router {
  const r = Router();
  r.post("/threads/:threadId/shares", createShare);
  r.get("/threads/:threadId/shares", listShares);
  r.delete("/threads/:threadId/shares/:shareId", revokeShare);
  r.get("/shares/:shareId", openShare);
  r.post("/shares/:shareId/continue", continueShare);
  return r;
}

/** The caller's thread named in the path (404 for anyone else's, as every thread route). */
async function ownThread(req: Request): Promise<{ uid: string; threadId: string }> {
  const { uid } = callerOf(req);
  const threadId = parse(ThreadIdParam, req.params.threadId, "path");
  await (await threadStore()).get(threadId, uid);
  return { uid, threadId };
}

async function audit(
  req: Request,
  action: ShareAction,
  entry: {
    shareId: string;
    threadId: string;
    owner: string;
    outcome?: "ok" | "refused";
    newThreadId?: string;
  },
): Promise<void> {
  const caller = callerOf(req);
  const { audit: log } = await accessStores();
  await log.record({
    kind: "share",
    uid: caller.uid,
    email: caller.email?.toLowerCase() ?? null,
    action,
    outcome: "ok",
    ...entry,
  });
}

async function createShare(req: Request, res: Response): Promise<void> {
  const { uid, threadId } = await ownThread(req);
  const { store } = await shareStore();
  const link = await store.create(uid, callerOf(req).email?.toLowerCase() ?? null, threadId);
  await audit(req, "share.create", { shareId: link.id, threadId, owner: uid });
  res.status(201).json(link);
}

async function listShares(req: Request, res: Response): Promise<void> {
  const { uid, threadId } = await ownThread(req);
  const body: SharesAnswer = { shares: await (await shareStore()).store.list(uid, threadId) };
  res.json(body);
}

async function revokeShare(req: Request, res: Response): Promise<void> {
  const { uid, threadId } = await ownThread(req);
  const shareId = String(req.params.shareId);
  if (!(await (await shareStore()).store.revoke(uid, threadId, shareId))) throw notFound(shareId);
  await audit(req, "share.revoke", { shareId, threadId, owner: uid });
  res.status(204).end();
}

/** A shared conversation the caller may see, or the not-found of a missing one. */
interface Shared {
  shareId: string;
  share: ShareDoc;
  thread: ThreadDoc;
  transcript: Record<string, unknown>[];
  summary: string;
}

/**
 * Reads the link, its thread (still its owner's) and the conversation, and checks that the
 * caller's scope covers it (the owner's own link needs no check: the thread is theirs). A refusal
 * is audited under `action`, then answered exactly like an unknown link.
 */
async function readShared(req: Request, action: ShareAction): Promise<Shared> {
  const shareId = String(req.params.shareId);
  const caller = runCallerOf(req);
  const share = await (await shareStore()).store.active(shareId);
  if (!share) throw notFound(shareId);
  const thread = (await (await threadStore()).ref(share.threadId).get()).data() as ThreadDoc | undefined;
  if (!thread || thread.owner !== share.owner || thread.deleting) throw notFound(shareId);
  const snap = await (await agentGraph()).getState({ configurable: { thread_id: share.threadId } });
  const values = toPlain(snap.values ?? {}) as { messages?: Record<string, unknown>[]; summary?: string };
  const transcript = sharedTranscript(values.messages ?? []);
  const summary = typeof values.summary === "string" ? values.summary : "";
  if (caller.uid !== share.owner) {
    const [factory, scope] = await Promise.all([
      graphFactory(),
      personScope(caller.uid, caller.access.scope),
    ]);
    const { datasets } = await factory.firstScreen(FULL_SCOPE);
    const covered = await scopeCovers(
      factory.dryRun,
      { uid: caller.uid, email: caller.email, scope },
      {
        threadId: share.threadId,
        shareId,
        transcript,
        also: [summary, thread.title],
        tableIds: datasets.flatMap((d) => d.tables.map((t) => `${d.name}.${t}`)),
      },
    );
    if (!covered) {
      await audit(req, action, { shareId, threadId: share.threadId, owner: share.owner, outcome: "refused" });
      throw notFound(shareId);
    }
  }
  return { shareId, share, thread, transcript, summary };
}

async function openShare(req: Request, res: Response): Promise<void> {
  const { shareId, share, thread, transcript, summary } = await readShared(req, "share.open");
  await audit(req, "share.open", { shareId, threadId: share.threadId, owner: share.owner });
  const body: SharedConversation = {
    id: shareId,
    title: thread.title,
    sharedBy: share.ownerEmail,
    createdAt: share.createdAt.toDate().toISOString(),
    messages: transcript,
    summarized: summary !== "",
  };
  res.json(body);
}

/**
 * Copies the shared conversation into a new thread of the caller's: its start checkpoint, then the
 * transcript (and summary) written as the graph's last node would leave a finished turn, so the
 * next question runs from there — as the caller, in their scope. A copy that fails half-way is
 * deleted.
 */
async function continueShare(req: Request, res: Response): Promise<void> {
  const { uid } = callerOf(req);
  const { shareId, share, thread, transcript, summary } = await readShared(req, "share.continue");
  const threadId = randomUUID();
  const [store, saver, graph, { now }] = await Promise.all([
    threadStore(),
    checkpointSaver(),
    agentGraph(),
    shareStore(),
  ]);
  await store.create(threadId, uid, { title: thread.title }, "raise", rootCommit(saver, threadId));
  try {
    if (transcript.length || summary) {
      await graph.updateState(
        { configurable: { thread_id: threadId } },
        { messages: transcript, ...(summary ? { summary } : {}) },
        "summarizer",
      );
    }
    await store.ref(threadId).update({
      values: threadValues(transcript),
      ...(thread.scopeKey ? { scopeKey: thread.scopeKey } : {}),
      updatedAt: now(),
    });
  } catch (err) {
    await saver.deleteThread(threadId).catch(() => undefined);
    await store.delete(threadId).catch(() => undefined);
    throw err;
  }
  await audit(req, "share.continue", {
    shareId,
    threadId: share.threadId,
    owner: share.owner,
    newThreadId: threadId,
  });
  const body: ContinuedShare = { thread_id: threadId };
  res.status(201).json(body);
}
