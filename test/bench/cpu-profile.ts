/**
 * Reads a V8 CPU profile (`.cpuprofile`, what `node --cpu-prof` and the inspector's Profiler write):
 * self time per frame and per part of the program (a package, a folder of the function, Node's own,
 * the garbage collector), for the run-cost bench's tables.
 */
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Where a frame's code lives: a package, a folder of the compiled function, Node, or V8's own. */
function partOf(url: string, functionName: string): string {
  if (!url) return functionName ? `(${functionName.replace(/[()]/g, "")})` : "(native)";
  if (url.startsWith("node:")) return "node internals";
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (pkg) return pkg;
  const fn = /functions\/lib\/([^/]+)(?:\/([^/]+))?/.exec(url);
  if (fn) return `quarry ${fn[2] && !fn[2].endsWith(".js") ? `${fn[1]}/${fn[2]}` : fn[1]}`;
  return url
    .replace(/^file:\/\//, "")
    .split("/")
    .slice(-2)
    .join("/");
}

function shortUrl(url: string): string {
  const pkg = /node_modules\/(.*)$/.exec(url)?.[1];
  if (pkg) return pkg;
  return url.replace(/^.*functions\/lib\//, "functions/").replace(/^node:/, "");
}

/** Self time (ms) per frame and per part, heaviest first; `ms` is the whole profile's sampled time. */
export function summarize(file: string): {
  ms: number;
  frames: { frame: string; ms: number }[];
  parts: { part: string; ms: number }[];
} {
  const p = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  p.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0) / 1000));
  const frames = new Map<string, number>();
  const parts = new Map<string, number>();
  let ms = 0;
  for (const [id, t] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    // Idle time, and the profiler's own stop (the inspector serializing the profile), are not the run's.
    if (functionName === "(idle)" || url === "node:inspector") continue;
    ms += t;
    const frame = url
      ? `${functionName || "(anonymous)"} ${shortUrl(url)}:${lineNumber + 1}`
      : `(${functionName.replace(/[()]/g, "")})`;
    frames.set(frame, (frames.get(frame) ?? 0) + t);
    const part = partOf(url, functionName);
    parts.set(part, (parts.get(part) ?? 0) + t);
  }
  const sorted = <K extends string>(m: Map<string, number>, key: K) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => ({ [key]: k, ms: v }) as { [P in K]: string } & { ms: number });
  return { ms, frames: sorted(frames, "frame"), parts: sorted(parts, "part") };
}
