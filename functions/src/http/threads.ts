import { randomUUID } from "node:crypto";
import { Router } from "express";
import { config } from "../config";
import { QuarryError } from "../errors";
import { firestore } from "../services";
import { callerOf } from "./auth";

/** Thread metadata as stored in Firestore (`threads/{threadId}`). */
export interface ThreadDoc {
  owner: string;
  title: string;
  status: "idle" | "busy" | "interrupted" | "error";
  metadata: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

/** Agent Server thread shape. */
export function toThread(id: string, doc: ThreadDoc) {
  return {
    thread_id: id,
    created_at: doc.createdAt,
    updated_at: doc.updatedAt,
    metadata: { ...doc.metadata, owner: doc.owner, title: doc.title },
    status: doc.status,
    values: null,
    interrupts: {},
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function threadRoutes(): Router {
  const r = Router();

  r.post("/threads", async (req, res) => {
    const { uid } = callerOf(req);
    const body = (req.body ?? {}) as { thread_id?: unknown; metadata?: unknown };
    const id = typeof body.thread_id === "string" ? body.thread_id : randomUUID();
    if (!UUID.test(id)) throw new QuarryError("bad_request:body", "thread_id must be a UUID.");
    const now = new Date().toISOString();
    const doc: ThreadDoc = {
      owner: uid,
      title: "",
      status: "idle",
      metadata: isPlainObject(body.metadata) ? body.metadata : {},
      createdAt: now,
      updatedAt: now,
    };
    const db = await firestore();
    await db.collection(config().threadsCollection).doc(id).create(doc);
    res.json(toThread(id, doc));
  });

  r.get("/threads/:threadId", async (req, res) => {
    const { uid } = callerOf(req);
    const id = req.params.threadId;
    const db = await firestore();
    const snap = UUID.test(id) ? await db.collection(config().threadsCollection).doc(id).get() : undefined;
    const doc = snap?.data() as ThreadDoc | undefined;
    // Another user's thread is indistinguishable from a missing one.
    if (!doc || doc.owner !== uid) {
      throw new QuarryError("not_found:thread", `Thread ${id} not found.`);
    }
    res.json(toThread(id, doc));
  });

  return r;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
