/**
 * Starting Node child processes under an address-space limit (`ulimit -v`): the DuckDB workers
 * (pool.ts) and the one-shot upload ingest (uploads/ingest.ts). Under such a limit a value or file
 * that needs more memory than allowed fails inside the child, or at worst ends the child — never
 * the function instance and the other runs it serves.
 */
import { spawn, type ChildProcess } from "node:child_process";
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

/** The figure measured in this process, per thread count. */
const probed = new Map<number, Promise<number>>();

/**
 * The address space Node and DuckDB take in a child before any work, measured once per instance
 * and thread count by starting the DuckDB worker with `--probe` (about 1.2 GiB virtual, 0.1 GiB
 * resident on Node 22; more under a TypeScript loader), so a limit fits the runtime it runs on.
 * Measured in each instance, not kept for the next: the figure varies between processes (under
 * tsx by hundreds of MiB), so another process's could be too low for this one's children.
 */
export function probeBaseMiB(threads: number): Promise<number> {
  let figure = probed.get(threads);
  if (!figure) {
    figure = probeNow(threads).catch((err: unknown) => {
      probed.delete(threads);
      throw err;
    });
    probed.set(threads, figure);
  }
  return figure;
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
