/**
 * Starting Node child processes under an address-space limit (`ulimit -v`): the DuckDB workers
 * (pool.ts) and the one-shot upload ingest (uploads/ingest.ts). Under such a limit a value or file
 * that needs more memory than allowed fails inside the child, or at worst ends the child — never
 * the function instance and the other runs it serves.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/** A child's entry file and the Node flags it needs. */
export interface ChildEntry {
  file: string;
  execArgv: string[];
}

/**
 * The entry `base` beside `fromFile`: compiled JavaScript beside compiled JavaScript, or the
 * TypeScript source under tsx (tests run the sources; the child then needs the tsx loader too).
 */
export function childEntry(fromFile: string, base: string): ChildEntry {
  const ext = path.extname(fromFile);
  const file = path.join(path.dirname(fromFile), `${base}${ext}`);
  return { file, execArgv: ext === ".ts" ? ["--import", "tsx"] : [] };
}

/** Starts `entry` with an IPC channel, its address space bounded to `limitMiB`. */
export function spawnUnderLimit(entry: ChildEntry, limitMiB: number, args: string[] = []): ChildProcess {
  const limitKiB = Math.ceil(limitMiB) * 1024;
  // `ulimit -v` then exec: the limit applies to the child alone; the shell does not stay.
  return spawn(
    "/bin/sh",
    [
      "-c",
      `ulimit -v ${limitKiB} && exec "$0" "$@"`,
      process.execPath,
      ...entry.execArgv,
      entry.file,
      ...args,
    ],
    { stdio: ["ignore", "inherit", "inherit", "ipc"], serialization: "advanced" },
  );
}

/** The figure measured or read in this process, per thread count. */
const probed = new Map<number, Promise<number>>();
/** Thread counts whose figure in this process was read from the file, not measured. */
const readKept = new Set<number>();

/** Whether this process's figure for `threads` was read from the file (a start that fails then measures again). */
export function probeWasKept(threads: number): boolean {
  return readKept.has(threads);
}

/**
 * The address space Node and DuckDB take in a child before any work, measured by starting the
 * DuckDB worker with `--probe` (about 1.2 GiB virtual, 0.1 GiB resident on Node 22; more under a
 * TypeScript loader), so a limit fits the runtime it runs on. Measured once per runtime: the figure
 * is kept in a file in the temporary directory, named after what decides it (Node's version and
 * flags, the worker's and DuckDB's files, the threads), so a fresh instance on the same machine
 * starts its first worker at once instead of after a probe (the probe's answer, on a busy new
 * instance, waits for the function's own thread too). A worker that does not start under a
 * limit made from a kept figure forgets it (`forgetProbe`): the next start measures again.
 */
export function probeBaseMiB(threads: number): Promise<number> {
  let figure = probed.get(threads);
  if (!figure) {
    figure = Promise.resolve()
      .then(() => {
        const kept = keptProbe(threads);
        if (kept !== undefined) readKept.add(threads);
        return kept ?? probeNow(threads).then((mib) => keepProbe(threads, mib));
      })
      .catch((err: unknown) => {
        probed.delete(threads);
        throw err;
      });
    probed.set(threads, figure);
  }
  return figure;
}

/** Forgets the measured figure (in this process and on disk): the next start probes again. */
export function forgetProbe(threads: number): void {
  probed.delete(threads);
  readKept.delete(threads);
  try {
    unlinkSync(probeFile(threads));
  } catch {
    /* none kept */
  }
}

function probeNow(threads: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const { file, execArgv } = childEntry(__filename, "worker");
    const child = spawn(process.execPath, [...execArgv, file, "--probe", String(threads)], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      serialization: "advanced",
    });
    child.once("message", (m: { kind: string; value?: unknown }) =>
      resolve(m.kind === "result" ? Number(m.value) : 0),
    );
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`the DuckDB probe exited with code ${code}`)));
  });
}

/** The file a figure is kept in: its name a hash of everything that decides the figure. */
function probeFile(threads: number): string {
  const { file, execArgv } = childEntry(__filename, "worker");
  const stamp = (f: string) => {
    try {
      const st = statSync(f);
      return `${f}:${st.size}:${st.mtimeMs}`;
    } catch {
      return f;
    }
  };
  const key = JSON.stringify([
    process.version,
    process.arch,
    process.execPath,
    execArgv,
    threads,
    stamp(file),
    stamp(duckDbBinding()),
    // What the child sizes itself by (the machine), which changes the address space it takes.
    [os.cpus().length, os.totalmem()],
  ]);
  // Per user: a file another user wrote (or could replace) is never read.
  const user = typeof process.getuid === "function" ? process.getuid() : "any";
  return path.join(
    os.tmpdir(),
    `quarry-duckdb-base-${user}-${createHash("sha256").update(key).digest("hex").slice(0, 16)}.json`,
  );
}

/** DuckDB's package entry (its version pins the native binding's), or its name when it does not resolve. */
function duckDbBinding(): string {
  try {
    return require.resolve("@duckdb/node-api");
  } catch {
    return "@duckdb/node-api";
  }
}

function keptProbe(threads: number): number | undefined {
  try {
    const kept = JSON.parse(readFileSync(probeFile(threads), "utf8")) as { baseMiB?: unknown };
    return typeof kept.baseMiB === "number" && kept.baseMiB > 0 ? kept.baseMiB : undefined;
  } catch {
    return undefined; // none kept, or unreadable: measured again
  }
}

function keepProbe(threads: number, baseMiB: number): number {
  if (baseMiB <= 0) return baseMiB; // not measured (no /proc): nothing worth keeping
  const file = probeFile(threads);
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, JSON.stringify({ baseMiB }));
    renameSync(tmp, file); // whole or not at all, for another process reading it
  } catch {
    /* a read-only temporary directory: measured again next time */
  }
  return baseMiB;
}
