/**
 * What the chat channels keep, all server-only (firestore.rules denies clients): the platform
 * events already taken (`chatEvents`, one `create` per event id so a platform's retries never make
 * a second answer; deleted by TTL on `expireAt`), the links from a chat user to a Quarry member
 * (`chatLinks`), which Quarry thread a chat thread is (`chatThreads`, per asker), and what an
 * answer's buttons act on (`chatAnswers`, TTL).
 */
import { createHash, randomBytes } from "node:crypto";
import { firestore } from "../services";
import { isAlreadyExists } from "../storage";

const EVENTS = "chatEvents";
const LINKS = "chatLinks";
const THREADS = "chatThreads";
const ANSWERS = "chatAnswers";

/** An event id is kept this long: longer than any platform retries it (Slack: 5 minutes). */
const EVENT_TTL_MS = 24 * 3_600_000;
/** An answer's buttons work this long. */
const ANSWER_TTL_MS = 30 * 24 * 3_600_000;

/** A chat user, as the platform names them: `slack:<team>:<user>`. */
export type ChatUserKey = string;

/** The member a chat user is linked to. */
export interface ChatLink {
  uid: string;
  email: string | null;
  emailVerified: boolean;
  platform: "slack" | "google_chat";
  /** How it was made without a connect link: Google Chat's verified Workspace email. */
  trusted?: "workspace_email";
}

/** What an answer's buttons need: whose thread, which turn, its SQL and the run. */
export interface ChatAnswer {
  uid: string;
  threadId: string;
  questionId: string;
  runId: string;
  sql: string[];
  /** In a shared room: where Share to thread posts, and what (the answer's text and blocks, JSON). */
  room?: { channel: string; threadTs: string; message: string };
}

const idOf = (key: string) => createHash("sha256").update(key).digest("hex").slice(0, 40);

async function expireAt(ms: number) {
  const { Timestamp } = await import("firebase-admin/firestore");
  return Timestamp.fromMillis(Date.now() + ms);
}

/** Records `eventId` once; false when it was recorded before (a retry). */
export async function recordEventOnce(eventId: string, what: Record<string, unknown>): Promise<boolean> {
  const db = await firestore();
  return db
    .collection(EVENTS)
    .doc(idOf(eventId))
    .create({ eventId, ...what, expireAt: await expireAt(EVENT_TTL_MS) })
    .then(
      () => true,
      (err: unknown) => {
        if (isAlreadyExists(err)) return false;
        throw err;
      },
    );
}

/** Forgets an event whose task could not be queued, so the platform's retry is taken. */
export async function forgetEvent(eventId: string): Promise<void> {
  await (await firestore()).collection(EVENTS).doc(idOf(eventId)).delete();
}

/** The member `user` is linked to, if any. */
export async function linkOf(user: ChatUserKey): Promise<ChatLink | undefined> {
  const snap = await (await firestore()).collection(LINKS).doc(idOf(user)).get();
  return snap.exists ? (snap.data() as ChatLink) : undefined;
}

/** The chat users a member linked on `platform` (a person may have linked more than one). */
export async function linkedUsers(uid: string, platform: ChatLink["platform"]): Promise<ChatUserKey[]> {
  const snap = await (
    await firestore()
  )
    .collection(LINKS)
    .where("uid", "==", uid)
    .where("platform", "==", platform)
    .get();
  return snap.docs.map((d) => d.get("user") as ChatUserKey);
}

/** Links `user` to a member (replacing an earlier link). */
export async function storeLink(user: ChatUserKey, link: ChatLink): Promise<void> {
  const { FieldValue } = await import("firebase-admin/firestore");
  await (
    await firestore()
  )
    .collection(LINKS)
    .doc(idOf(user))
    .set({ ...link, user, linkedAt: FieldValue.serverTimestamp() });
}

/** Which Quarry thread a chat thread is for one member, and the question last asked in it. */
export interface ChatThread {
  threadId: string;
  questionId?: string;
}

/** The Quarry thread of a chat thread for this member, if they asked in it before. */
export async function threadOf(chatThread: string, uid: string): Promise<ChatThread | undefined> {
  const snap = await (
    await firestore()
  )
    .collection(THREADS)
    .doc(idOf(`${chatThread}/${uid}`))
    .get();
  return snap.exists ? (snap.data() as ChatThread) : undefined;
}

/** Remembers which Quarry thread a chat thread is for this member (and the question asked last). */
export async function storeThread(chatThread: string, uid: string, thread: ChatThread): Promise<void> {
  await (
    await firestore()
  )
    .collection(THREADS)
    .doc(idOf(`${chatThread}/${uid}`))
    .set({ chatThread, uid, ...thread }, { merge: true });
}

/** A new answer record's id (the buttons' value). */
export function newAnswerId(): string {
  return randomBytes(15).toString("hex");
}

/** Keeps what an answer's buttons act on; returns its id. */
export async function storeAnswer(answer: ChatAnswer, id: string = newAnswerId()): Promise<string> {
  await (
    await firestore()
  )
    .collection(ANSWERS)
    .doc(id)
    .set({ ...answer, expireAt: await expireAt(ANSWER_TTL_MS) });
  return id;
}

/** An answer's record, or undefined when it is unknown or expired. */
export async function answerOf(id: string): Promise<ChatAnswer | undefined> {
  if (!/^[A-Za-z0-9]{1,40}$/.test(id)) return undefined;
  const snap = await (await firestore()).collection(ANSWERS).doc(id).get();
  return snap.exists ? (snap.data() as ChatAnswer) : undefined;
}
