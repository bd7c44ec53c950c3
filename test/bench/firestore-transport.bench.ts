/**
 * Firestore's two transports, CPU of the client per call (issue #46): gRPC (HTTP/2, protobuf; what
 * Quarry uses) against REST (`preferRest: true`, HTTP/1.1 and JSON for unary calls), on the Java
 * emulator, in this process, alternating rounds of the same calls — a commit of two small
 * documents, a get of one. The REST client asks for Application Default Credentials even with the
 * emulator (nodejs-firestore#1811), so it is given an OAuth2 client holding the emulator's
 * `owner` token, which is what the gRPC client sends there by itself.
 *
 * Also, on gRPC only (a listen needs it: a REST client moves to gRPC for good at its first), what a
 * run's cancel listener costs the client: a listen on one document through its first snapshot and
 * one change, then closed, less the update that makes the change (measured alone in the same round).
 */
import { Firestore, type Settings } from "@google-cloud/firestore";
import { createRequire } from "node:module";
import { startStack } from "../../scripts/stack.mjs";

const CALLS = Number(process.env.BENCH_CALLS ?? 300);
const ROUNDS = Number(process.env.BENCH_RUNS ?? 5);

/** google-auth-library as the Firestore client's own google-gax loads it (its auth client type). */
const gaxRequire = createRequire(createRequire(import.meta.url).resolve("@google-cloud/firestore"));

function restAuth() {
  const { OAuth2Client } = gaxRequire("google-auth-library") as {
    OAuth2Client: new () => { setCredentials(c: { access_token: string; expiry_date: number }): void };
  };
  const client = new OAuth2Client();
  client.setCredentials({ access_token: "owner", expiry_date: Date.now() + 86_400_000 });
  return client;
}

/** CPU ms of this process per call of `op`, over CALLS calls. */
async function cpuPerCall(op: (i: number) => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) await op(i);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / CALLS;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** A listen on `doc` as a run keeps one: its first snapshot, then the change `update` makes, then closed. */
async function listenThroughOneChange(doc: FirebaseFirestore.DocumentReference, i: number): Promise<void> {
  let seen = 0;
  let wake: (() => void) | undefined;
  const stop = doc.onSnapshot(
    () => {
      seen++;
      wake?.();
    },
    () => {},
  );
  const snapshots = async (n: number) => {
    while (seen < n) await new Promise<void>((resolve) => (wake = resolve));
  };
  await snapshots(1);
  await doc.update({ i });
  await snapshots(2);
  stop();
}

async function main() {
  const stack = await startStack({ services: ["firestore"], ports: "auto" });
  Object.assign(process.env, stack.env, { METADATA_SERVER_DETECTION: "none" });
  const projectId = stack.env.GCLOUD_PROJECT;
  const clients: Record<string, Firestore> = {
    "gRPC (default)": new Firestore({ projectId }),
    "REST (preferRest)": new Firestore({ projectId, preferRest: true, authClient: restAuth() } as Settings),
  };
  const samples: Record<string, { commit: number[]; get: number[] }> = {};
  const listen: { update: number[]; listened: number[] } = { update: [], listened: [] };
  try {
    for (const [name, db] of Object.entries(clients)) {
      samples[name] = { commit: [], get: [] };
      const doc = db.collection("transport").doc(name.split(" ")[0]);
      for (let i = 0; i < 50; i++) await doc.set({ i }); // channel open, code warm
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, db] of Object.entries(clients)) {
        const a = db.collection("transport").doc(`${name.split(" ")[0]}-a`);
        const b = db.collection("transport").doc(`${name.split(" ")[0]}-b`);
        samples[name].commit.push(
          await cpuPerCall((i) =>
            db
              .batch()
              .set(a, { i, s: "x".repeat(200) })
              .set(b, { i })
              .commit(),
          ),
        );
        samples[name].get.push(await cpuPerCall(() => a.get()));
        if (name.startsWith("gRPC")) {
          listen.update.push(await cpuPerCall((i) => a.update({ i })));
          listen.listened.push(await cpuPerCall((i) => listenThroughOneChange(a, i)));
        }
      }
    }
  } finally {
    await Promise.all(Object.values(clients).map((db) => db.terminate()));
    await stack.stop();
  }
  const base = samples["gRPC (default)"];
  console.log(
    `\nFirestore client CPU per call, ${CALLS} calls × ${ROUNDS} rounds each (median), on the emulator`,
  );
  console.table(
    Object.entries(samples).map(([transport, s]) => ({
      transport,
      "commit CPU ms/call": median(s.commit).toFixed(2),
      "× gRPC": (median(s.commit) / median(base.commit)).toFixed(2),
      "get CPU ms/call": median(s.get).toFixed(2),
      "× gRPC ": (median(s.get) / median(base.get)).toFixed(2),
    })),
  );
  const update = median(listen.update);
  console.log(
    `a listen (first snapshot, one change, closed) on gRPC: ${(median(listen.listened) - update).toFixed(2)} ` +
      `CPU ms beyond the update that makes its change (${median(listen.listened).toFixed(2)} with it, the update ` +
      `alone ${update.toFixed(2)})`,
  );
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
