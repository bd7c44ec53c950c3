/**
 * The one-shot ingest process (started by ingest.ts under an address-space limit): it reads one
 * upload, answers once over IPC, and exits. A file built to exhaust memory (a zip or CSV bomb)
 * ends this process, not the function instance.
 */
import { QuarryError } from "../../errors";
import { needsMoreMemory, readUpload, type ReadInput } from "./read";
import type { IngestResult } from "./types";
import { toWire, type WireError } from "../wire-error";

/** The child's one answer. */
export type IngestReply = { ok: true; result: IngestResult } | { ok: false; error: WireError };

/**
 * DuckDB's, C++'s and the system's words for an allocation that failed. The last alternative is
 * the Node binding's bare "Failed to query" (or open, connect, prepare): DuckDB's C API returns an
 * error with no message only when it could not build the result it reports in, which under this
 * child's address-space limit is an allocation that failed (seen in about 1 run in 9 at the limit).
 */
const OUT_OF_MEMORY =
  /Out of Memory|bad_alloc|Cannot allocate memory|ENOMEM|^Error: Failed to (query|open|connect|prepare)$/i;

const reply = (r: IngestReply) =>
  new Promise<void>((resolve) => {
    if (!process.connected) return resolve();
    process.send!(r, () => resolve());
  });

process.once("message", (input: ReadInput) => {
  readUpload(input)
    .then(
      (result) => reply({ ok: true, result }),
      (thrown: unknown) => {
        // Memory can run out anywhere, opening DuckDB included: every such end is the worded refusal.
        const err =
          !(thrown instanceof QuarryError) && OUT_OF_MEMORY.test(String(thrown)) ? needsMoreMemory() : thrown;
        return reply({ ok: false, error: toWire(err) });
      },
    )
    .finally(() => process.disconnect());
});
// The function instance went away: so does this ingest.
process.on("disconnect", () => process.exit(0));
