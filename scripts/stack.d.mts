export const ROOT: string;
export const PROJECT_ID: string;
export const REGION: string;
export const DEFAULT_PORTS: Readonly<Record<string, number>>;
export const liveGroups: Map<number, string>;
export class StackError extends Error {}
export interface Stack {
  ports: Record<string, number>;
  env: Record<string, string>;
  urls: { api?: string; web?: string; auth?: string; firestore?: string };
  pids: number[];
  stop(): Promise<void>;
}
export interface StackOptions {
  services?: string[];
  ports?: "auto" | Record<string, number | "auto">;
  functionsEnv?: Record<string, string>;
  env?: Record<string, string | undefined>;
  rules?: string;
  log?: (line: string) => void;
  onOutput?: (chunk: Buffer) => void;
}
export function startStack(options?: StackOptions): Promise<Stack>;
export function stopGroup(pid: number, signal?: string, graceMs?: number): Promise<void>;
export function isPortFree(port: number): Promise<boolean>;
/** The OS's own range for the ports it hands out (Linux's setting), or null where there is none. */
export function ephemeralRange(file?: string): { low: number; high: number } | null;
/** A free port below the OS's own range (so nothing else is handed it meanwhile); else one the OS picks. */
export function freePort(range?: { low: number; high: number } | null): Promise<number>;
export function choosePorts(
  services: string[],
  ports?: "auto" | Record<string, number>,
): Promise<Record<string, number>>;
/** Which Firestore emulator runs, from what the machine has; throws one line naming what to install. */
export function chooseFirestoreEmulator(facts: {
  candidates: (string | undefined)[];
  exists(path: string): boolean;
  javaMajor: number;
}): { kind: "java" | "firebase-tools"; bin?: string; says: string };
export function findFirestoreEmulator(env?: Record<string, string | undefined>): {
  kind: "java" | "firebase-tools";
  bin?: string;
  says: string;
};
/** The start-up banner's model line(s), read from the running function's GET /client-config. */
export function modelLines(apiUrl: string): Promise<string[]>;
/** One rule of firebase.json's `hosting.headers`. */
export interface HostingHeaderRule {
  source?: string;
  regex?: string;
  headers: { key: string; value: string }[];
}
/** The origins the local page calls besides its own (API function, Auth and Firestore emulators). */
export function pageEmulatorOrigins(
  services: string[],
  ports: Record<string, number>,
  env: Record<string, string | undefined>,
): string[];
/** A hosting config with `origins` added to its Content-Security-Policy's connect-src. */
export function withConnectSources<H extends { headers?: HostingHeaderRule[] }>(
  hosting: H,
  origins: string[],
): H & { headers: HostingHeaderRule[] };
