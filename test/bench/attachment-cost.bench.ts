/**
 * What an image in a question costs (`npm run bench -- attachment-cost`): the function as deployed
 * (run-cost-instance.ts, every stage on, in a process of its own) asked through the SDK with
 * agent-chat-ui's stream modes, the same question without and with a 2 MB image, measured in the
 * same run, one run at a time:
 * - the instance's peak resident memory above what it held before the run (the kernel's high-water
 *   mark) and its peak heap (sampled), the figures a function's memory setting must cover;
 * - what the client receives (the events' JSON) and what Firestore holds for the conversation
 *   (checkpoints, run log, thread: every field's bytes), after the question and what a follow-up
 *   question adds (an image must not be stored again with every later step or turn);
 * then one image run under V8's sampling heap profiler: the sites that allocate the most.
 */
import { randomBytes } from "node:crypto";
import type { Client } from "@langchain/langgraph-sdk";
import { initializeApp } from "firebase-admin/app";
import { getFirestore, type DocumentReference } from "firebase-admin/firestore";
import { signUp } from "../support/auth-emulator";
import {
  DEPLOYED_ENV,
  QUESTION,
  clientOf,
  median,
  startBackends,
  startInstance,
  type Instance,
} from "./run-cost-measure";
import type { Peak, Usage } from "./run-cost-instance";

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const IMAGE_MB = 2;
const FOLLOW_UP = "And how many customers are there?";

/** A PNG's signature and then incompressible bytes: the size of a photo the page has scaled down. */
const image = () =>
  Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), randomBytes(IMAGE_MB * 2 ** 20 - 8)]).toString(
    "base64",
  );

type Content = string | Record<string, unknown>[];

/** One run as agent-chat-ui asks for it; the bytes of the events' JSON it received. */
async function ask(client: Client, threadId: string, content: Content): Promise<number> {
  let bytes = 0;
  let answered = false;
  for await (const ev of client.runs.stream(threadId, "quarry", {
    input: { messages: [{ type: "human", content }] },
    streamMode: ["values", "messages-tuple", "custom"],
  })) {
    if (ev.event === "error") throw new Error(`the run failed: ${JSON.stringify(ev.data)}`);
    bytes += JSON.stringify(ev.data ?? null).length;
    if (ev.event === "messages") answered = true;
  }
  if (!answered) throw new Error("the run streamed no answer");
  return bytes;
}

/** Bytes of a stored value: strings and bytes by length, numbers 8, maps and arrays by their parts. */
function sizeOf(v: unknown): number {
  if (typeof v === "string") return v.length;
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return v.byteLength;
  if (Array.isArray(v)) return v.reduce((a: number, x) => a + sizeOf(x), 0);
  if (v && typeof v === "object" && v.constructor === Object) {
    return Object.entries(v).reduce((a, [k, x]) => a + k.length + sizeOf(x), 0);
  }
  return 8;
}

/** Every byte Firestore holds under a document (its fields and every subcollection's documents). */
async function storedBytes(ref: DocumentReference): Promise<number> {
  const snap = await ref.get();
  let bytes = snap.exists ? sizeOf(snap.data()) : 0;
  for (const col of await ref.listCollections()) {
    for (const doc of await col.listDocuments()) bytes += await storedBytes(doc);
  }
  return bytes;
}

interface Row {
  peakRss: number[];
  peakHeap: number[];
  received: number[];
  stored: number[];
  followUpStored: number[];
}

async function measure(
  inst: Instance,
  client: Client,
  content: () => Content,
  db: FirebaseFirestore.Firestore,
) {
  const row: Row = { peakRss: [], peakHeap: [], received: [], stored: [], followUpStored: [] };
  const { thread_id } = await client.threads.create();
  const before = await inst.ask<Usage>({ cmd: "gc" });
  await inst.ask({ cmd: "peak-start" });
  row.received.push(await ask(client, thread_id, content()));
  const peak = await inst.ask<Peak>({ cmd: "peak-stop" });
  row.peakRss.push(peak.rss - before.rss);
  row.peakHeap.push(peak.heapUsed - before.heapUsed);
  const ref = db.doc(`threads/${thread_id}`);
  const stored = await storedBytes(ref);
  row.stored.push(stored);
  await ask(client, thread_id, FOLLOW_UP);
  row.followUpStored.push((await storedBytes(ref)) - stored);
  return row;
}

const mb = (xs: number[]) => (median(xs) / 2 ** 20).toFixed(1);

async function main() {
  const { stack, env, stop } = await startBackends();
  let inst: Instance | undefined;
  try {
    Object.assign(process.env, stack.env);
    const db = getFirestore(initializeApp({ projectId: stack.env.GCLOUD_PROJECT }, "attachment-bench"));
    const person = await signUp(stack.urls.auth!);
    inst = await startInstance({ BENCH_UID: person.uid, BENCH_EMAIL: person.email, ...env, ...DEPLOYED_ENV });
    const client = clientOf(inst.port!, person.idToken);
    const withImage = (): Content => [
      { type: "text", text: QUESTION },
      { type: "image", mimeType: "image/png", data: image(), metadata: { name: "dashboard.png" } },
    ];
    const variants: [string, () => Content][] = [
      ["text only", () => QUESTION],
      [`with a ${IMAGE_MB} MB image`, withImage],
    ];
    for (let i = 0; i < 2; i++) await measure(inst, client, withImage, db); // warm
    const rows = variants.map(
      () => ({ peakRss: [], peakHeap: [], received: [], stored: [], followUpStored: [] }) as Row,
    );
    // Alternated, so drift on this machine hits both alike.
    for (let r = 0; r < RUNS; r++) {
      for (const [k, [, content]] of variants.entries()) {
        const m = await measure(inst, client, content, db);
        for (const key of Object.keys(m) as (keyof Row)[]) rows[k][key].push(...m[key]);
      }
    }
    console.log(
      `What an image costs: "${QUESTION}" then "${FOLLOW_UP}", the function as deployed, Vertex AI stand-in, ` +
        `Firestore emulator; medians of ${RUNS} runs each, MB = 2^20 bytes`,
    );
    console.table(
      variants.map(([name], k) => ({
        question: name,
        "peak RSS above before, MB": mb(rows[k].peakRss),
        "peak heap above before, MB": mb(rows[k].peakHeap),
        "events received, MB": mb(rows[k].received),
        "Firestore holds after it, MB": mb(rows[k].stored),
        "a follow-up adds, MB": mb(rows[k].followUpStored),
      })),
    );
    const { thread_id } = await client.threads.create();
    await inst.ask({ cmd: "peak-start", sampleHeap: true });
    await ask(client, thread_id, withImage());
    const sampled = await inst.ask<Peak>({ cmd: "peak-stop" });
    console.log(
      `\nWhere one run with the image allocates (V8's sampling heap profiler, collected objects included):`,
    );
    console.table(sampled.sites!.map((s) => ({ site: s.frame, MB: s.mb.toFixed(1) })));
  } finally {
    inst?.child.kill();
    await stop();
  }
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
