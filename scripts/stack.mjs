#!/usr/bin/env node
/**
 * Quarry's local stack: Google's Java Firestore emulator plus firebase-tools' functions, auth and
 * hosting emulators, all on 127.0.0.1, offline, with a `demo-` project.
 *
 * Used by `npm start` (foreground; Ctrl-C or SIGTERM stops everything) and by the test suite's
 * global setup (`startStack({ ports: "auto" })`). Every process it starts runs in its own process
 * group and is stopped by group, so the Java wrapper's forked JVM and the functions emulator's
 * workers never outlive it.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const PROJECT_ID = "demo-quarry";
export const REGION = "us-central1";
/** Where Google's Cloud SDK puts the Java Firestore emulator. */
export const PREINSTALLED_FIRESTORE =
  "/usr/lib/google-cloud-sdk/platform/cloud-firestore-emulator/cloud_firestore_emulator";
/** The ports `npm start` uses unless told otherwise (firestore is not in firebase.json: we run it). */
/** Process groups started and not yet stopped, so a signal during start-up still cleans up. */
export const liveGroups = new Map();

export const DEFAULT_PORTS = Object.freeze({
  firestore: 8080,
  functions: 5001,
  auth: 9099,
  hosting: 5000,
  hub: 4400,
  logging: 4500,
  eventarc: 9299,
  tasks: 9499,
});

/**
 * The origins the local page talks to besides its own: the API function (`QUARRY_API_URL`, which
 * `/client-config` hands the page), the Auth emulator and the Firestore emulator (the function's
 * `FIRESTORE_EMULATOR_HOST`, also handed to the page).
 */
export function pageEmulatorOrigins(services, ports, env) {
  const origins = new Set();
  if (services.includes("functions") && env.QUARRY_API_URL) origins.add(new URL(env.QUARRY_API_URL).origin);
  if (services.includes("auth")) origins.add(`http://127.0.0.1:${ports.auth}`);
  if (env.FIRESTORE_EMULATOR_HOST) origins.add(`http://${env.FIRESTORE_EMULATOR_HOST}`);
  else if (ports.firestore) origins.add(`http://127.0.0.1:${ports.firestore}`);
  return [...origins];
}

/**
 * firebase.json's hosting config with `origins` added to the Content-Security-Policy's connect-src
 * (every header rule that sets one). firebase.json's policy names the production origins only
 * (docs/deploy.md#security-headers); the local page calls the emulators on loopback ports that
 * change from run to run, so the launcher's copy of the config allows exactly those.
 */
export function withConnectSources(hosting, origins) {
  const rules = (hosting.headers ?? []).map((rule) => ({
    ...rule,
    headers: rule.headers.map((h) =>
      h.key.toLowerCase() === "content-security-policy"
        ? { ...h, value: addConnectSources(h.value, origins) }
        : h,
    ),
  }));
  return { ...hosting, headers: rules };
}

function addConnectSources(policy, origins) {
  const directives = policy
    .split(";")
    .map((d) => d.trim())
    .filter(Boolean);
  const at = directives.findIndex((d) => d.split(/\s+/)[0] === "connect-src");
  if (at >= 0) directives[at] = [directives[at], ...origins].join(" ");
  else {
    // Without connect-src, default-src decides: start from its sources.
    const fallback =
      directives
        .find((d) => d.split(/\s+/)[0] === "default-src")
        ?.split(/\s+/)
        .slice(1) ?? [];
    directives.push(["connect-src", ...fallback, ...origins].join(" "));
  }
  return directives.join("; ");
}

/** A clear, user-facing failure of the launcher. */
export class StackError extends Error {
  constructor(message) {
    super(message);
    this.name = "StackError";
  }
}

/** Resolves with true when nothing listens on 127.0.0.1:port. */
export function isPortFree(port) {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once("error", () => resolve(false));
    srv.listen({ port, host: "127.0.0.1", exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/**
 * The range the OS hands out ports from by itself — to a bind to port 0 and to every outgoing
 * connection's local end — read from Linux's setting; null where there is none to read.
 */
export function ephemeralRange(file = "/proc/sys/net/ipv4/ip_local_port_range") {
  try {
    const [low, high] = readFileSync(file, "utf8").trim().split(/\s+/).map(Number);
    return Number.isInteger(low) && Number.isInteger(high) && low > 0 && high >= low ? { low, high } : null;
  } catch {
    return null;
  }
}

/** The lowest port an automatic choice takes: below it sit the well-known services' defaults. */
const AUTO_PORT_FLOOR = 15_000;

/**
 * A port that is free now and that the OS will not hand to anyone else before an emulator binds
 * it: a random free one below the OS's own range, so none of a busy machine's outgoing connections
 * (or another test's port-0 server) can take it in between — a port the OS picked from its range
 * can be. Where the range cannot be read, or leaves too little room below it, the OS picks.
 */
export async function freePort(range = ephemeralRange()) {
  if (range && range.low - AUTO_PORT_FLOOR >= 1_000) {
    for (let tries = 0; tries < 50; tries++) {
      const port = AUTO_PORT_FLOOR + Math.floor(Math.random() * (range.low - AUTO_PORT_FLOOR));
      if (await isPortFree(port)) return port;
    }
  }
  return osFreePort();
}

/** A port the OS says is free right now, from its own range. */
function osFreePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen({ port: 0, host: "127.0.0.1" }, () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Picks the ports: "auto" takes free ones; otherwise the given (or default) ports must be free,
 * and a taken one is an error naming it and the flag that changes it.
 */
export async function choosePorts(services, ports = {}) {
  const chosen = {};
  const usesFirebaseTools = services.some((s) => s !== "firestore");
  // firebase-tools also opens the eventarc and tasks emulators next to functions, on fixed
  // defaults unless told: two stacks at once would collide there.
  const support = usesFirebaseTools ? ["hub", "logging"] : [];
  if (services.includes("functions")) support.push("eventarc", "tasks");
  const needed = new Set([...services, ...support]);
  for (const name of needed) {
    if (ports === "auto" || ports[name] === "auto") {
      let p = await freePort();
      while (Object.values(chosen).includes(p)) p = await freePort();
      chosen[name] = p;
      continue;
    }
    const p = Number(ports[name] ?? DEFAULT_PORTS[name]);
    if (!(await isPortFree(p))) {
      throw new StackError(
        `Port ${p} (${name} emulator) is already in use on 127.0.0.1. Stop whatever uses it ` +
          `(is another \`npm start\` running?), or choose another port with --${name}-port=N, ` +
          `or pass --ports=auto to pick free ports.`,
      );
    }
    chosen[name] = p;
  }
  return chosen;
}

/** How to install what the Firestore emulator needs, named once for every message below. */
const INSTALL_GOOGLE_EMULATOR =
  "`gcloud components install cloud-firestore-emulator` (or Debian's `google-cloud-cli-firestore-emulator`; " +
  "QUARRY_FIRESTORE_EMULATOR_BIN names its `cloud_firestore_emulator` script elsewhere)";

/**
 * Which Firestore emulator the stack runs, decided from what the machine has (pure: the facts are
 * passed in). Google's Java emulator when it is installed (it needs Java 17+); else firebase-tools'
 * own, which fetches its jar once and needs Java 21+; else one line naming what to install.
 * Returns `{ kind, bin?, says }`: `says` is the line the launcher prints.
 */
export function chooseFirestoreEmulator({ candidates, exists, javaMajor }) {
  const bin = candidates.find((c) => c && exists(c));
  if (bin && javaMajor >= 17)
    return { kind: "java", bin, says: `Firestore emulator: Google's (${bin}), Java ${javaMajor}` };
  if (bin) {
    throw new StackError(
      `Google's Firestore emulator needs Java 17 or newer, and ${javaMajor ? `this machine has Java ${javaMajor}` : "no `java` is on the PATH"}: install a Java 17+ runtime (e.g. \`apt-get install openjdk-17-jre-headless\`).`,
    );
  }
  if (javaMajor >= 21) {
    return {
      kind: "firebase-tools",
      says:
        `Firestore emulator: firebase-tools' own, Java ${javaMajor} (Google's was not found: install it with ` +
        `${INSTALL_GOOGLE_EMULATOR} to use it; firebase-tools fetches its emulator's jar once, which needs the internet)`,
    };
  }
  throw new StackError(
    javaMajor
      ? `No Firestore emulator can run: Google's is not installed and firebase-tools' own needs Java 21+ (this machine has Java ${javaMajor}). Install Google's with ${INSTALL_GOOGLE_EMULATOR}, or Java 21+.`
      : `No Firestore emulator can run: no \`java\` is on the PATH. Install Java 21+ (firebase-tools then fetches its own emulator once), or Java 17+ and Google's emulator with ${INSTALL_GOOGLE_EMULATOR}.`,
  );
}

/** The Java major version on the PATH (`java -version`), or 0 when there is none. */
function javaMajorOnPath(env) {
  const java = spawnSync("java", ["-version"], { encoding: "utf8", env });
  const version = /version "(\d+)(?:\.(\d+))?/.exec(`${java.stderr ?? ""}${java.stdout ?? ""}`);
  if (!version) return 0;
  // Java 8 and older call themselves "1.8".
  return Number(version[1]) === 1 ? Number(version[2] ?? 0) : Number(version[1]);
}

/** Finds a Firestore emulator this machine can run, or explains what to install (one line). */
export function findFirestoreEmulator(env = process.env) {
  const candidates = [env.QUARRY_FIRESTORE_EMULATOR_BIN, PREINSTALLED_FIRESTORE];
  const gcloud = spawnSync("gcloud", ["info", "--format=value(installation.sdk_root)"], {
    encoding: "utf8",
    timeout: 10_000,
  });
  if (gcloud.status === 0 && gcloud.stdout.trim()) {
    candidates.push(
      path.join(gcloud.stdout.trim(), "platform/cloud-firestore-emulator/cloud_firestore_emulator"),
    );
  }
  return chooseFirestoreEmulator({ candidates, exists: existsSync, javaMajor: javaMajorOnPath(env) });
}

/** Keeps the last lines a process printed, for error messages. */
function tail(child, lines = 60) {
  const buf = [];
  const push = (chunk) => {
    for (const line of String(chunk).split("\n")) {
      if (line.trim()) buf.push(line);
      if (buf.length > lines) buf.shift();
    }
  };
  child.stdout?.on("data", push);
  child.stderr?.on("data", push);
  return () => buf.join("\n");
}

function groupAlive(pid) {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Stops a process group: a polite signal, then SIGKILL; resolves when no member is left. */
export async function stopGroup(pid, signal = "SIGTERM", graceMs = 10_000) {
  if (!pid || !groupAlive(pid)) return;
  try {
    process.kill(-pid, signal);
  } catch {
    /* already gone */
  }
  const deadline = Date.now() + graceMs;
  while (groupAlive(pid) && Date.now() < deadline) await sleep(100);
  if (groupAlive(pid)) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      /* already gone */
    }
    while (groupAlive(pid)) await sleep(50);
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls a URL until it answers 2xx, the process dies, or the time runs out. */
async function waitForHttp(url, { child, output, what, timeoutMs }) {
  const deadline = Date.now() + timeoutMs;
  let exited = null;
  child.once("exit", (code, sig) => (exited = { code, sig }));
  while (Date.now() < deadline) {
    if (exited) {
      throw new StackError(
        `${what} exited (code ${exited.code ?? exited.sig}) before it was ready. Its output:\n${output()}`,
      );
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.ok) return;
    } catch {
      /* not up yet */
    }
    await sleep(250);
  }
  throw new StackError(`${what} did not answer ${url} within ${timeoutMs / 1000}s. Its output:\n${output()}`);
}

/**
 * Starts the stack. Options:
 * - services: subset of ["firestore", "functions", "auth", "hosting"] (default all).
 * - ports: "auto" or { firestore, functions, auth, hosting } (defaults: DEFAULT_PORTS).
 * - env: extra environment for the emulators (passed through to the function).
 * - functionsEnv: environment for firebase-tools applied after the launcher's own (overrides it).
 * - rules: path of firestore rules for the Firestore emulator.
 * - log: function receiving progress lines.
 * Resolves with { ports, env, urls, pids, stop() }.
 */
export async function startStack(options = {}) {
  const services = options.services ?? ["firestore", "functions", "auth", "hosting"];
  const log = options.log ?? (() => {});
  const ports = await choosePorts(services, options.ports ?? {});
  const started = [];
  const cleanups = [];
  const stop = async () => {
    for (const s of started.reverse()) {
      await stopGroup(s.pid, s.signal);
      liveGroups.delete(s.pid);
    }
    started.length = 0;
    for (const c of cleanups.splice(0)) c();
  };
  const baseEnv = {
    ...process.env,
    ...options.env,
    CI: "true",
    METADATA_SERVER_DETECTION: "none",
    GCLOUD_PROJECT: PROJECT_ID,
  };
  const env = {};
  try {
    if (services.includes("firestore")) {
      const emu = findFirestoreEmulator(baseEnv);
      log(emu.says);
      if (emu.kind === "java") {
        const args = ["start", "--host=127.0.0.1", `--port=${ports.firestore}`, `--project_id=${PROJECT_ID}`];
        if (options.rules) args.push(`--rules=${path.resolve(options.rules)}`);
        log(`Starting Firestore emulator on 127.0.0.1:${ports.firestore}`);
        const child = spawn(emu.bin, args, {
          detached: true,
          stdio: ["ignore", "pipe", "pipe"],
          env: baseEnv,
        });
        started.push({ pid: child.pid, signal: "SIGTERM", name: "firestore" });
        liveGroups.set(child.pid, "SIGTERM");
        const output = tail(child);
        await waitForHttp(`http://127.0.0.1:${ports.firestore}/`, {
          child,
          output,
          what: "The Firestore emulator",
          timeoutMs: 60_000,
        });
        env.FIRESTORE_EMULATOR_HOST = `127.0.0.1:${ports.firestore}`;
      }
    }
    const firebaseServices = services.filter((s) => ["functions", "auth", "hosting"].includes(s));
    if (services.includes("firestore") && !env.FIRESTORE_EMULATOR_HOST) {
      firebaseServices.push("firestore");
    }
    if (firebaseServices.length > 0) {
      // functionsEnv comes last: tests use it to put a fault-injecting proxy in front of Firestore.
      const fnEnv = { ...baseEnv, ...env, ...options.functionsEnv };
      // firebase-tools' own Firestore emulator (no Google one here): started beside the functions.
      if (firebaseServices.includes("firestore"))
        fnEnv.FIRESTORE_EMULATOR_HOST ??= `127.0.0.1:${ports.firestore}`;
      if (firebaseServices.includes("functions")) {
        // The web page learns the API URL from the function (GET /client-config) and calls it cross-origin.
        fnEnv.QUARRY_API_URL ??= `http://127.0.0.1:${ports.functions}/${PROJECT_ID}/${REGION}/api`;
        // No access policy given: the local open one (every Auth emulator account), said at start-up.
        if (!fnEnv.QUARRY_ALLOWED_DOMAINS && !fnEnv.QUARRY_ADMINS)
          fnEnv.QUARRY_ACCESS_POLICY ??= "local-open";
        if (ports.hosting) {
          fnEnv.QUARRY_CORS_ORIGINS ??= `http://127.0.0.1:${ports.hosting},http://localhost:${ports.hosting}`;
        }
        // The emulator starts one worker process per concurrent request and gives each 30 s to load;
        // many at once on a small machine take longer, and a worker that misses it fails its request
        // ("Failed to load function") and leaves the emulator's queue stuck.
        fnEnv.FUNCTIONS_DISCOVERY_TIMEOUT ??= "180";
      }
      if (firebaseServices.includes("functions") && !fnEnv.FIRESTORE_EMULATOR_HOST) {
        throw new StackError(
          "FIRESTORE_EMULATOR_HOST is not set: the functions emulator needs a Firestore emulator. " +
            "Include firestore in the services, or export FIRESTORE_EMULATOR_HOST=127.0.0.1:<port>.",
        );
      }
      const cfg = JSON.parse(readFileSync(path.join(ROOT, "firebase.json"), "utf8"));
      cfg.emulators = { singleProjectMode: true, ui: { enabled: false } };
      const supportPorts = ["hub", "logging", "eventarc", "tasks"].filter((n) => ports[n]);
      for (const name of [...firebaseServices, ...supportPorts]) {
        cfg.emulators[name] = { host: "127.0.0.1", port: ports[name] };
      }
      if (cfg.hosting && firebaseServices.includes("hosting")) {
        cfg.hosting = withConnectSources(cfg.hosting, pageEmulatorOrigins(firebaseServices, ports, fnEnv));
      }
      // firebase-tools treats the config file's folder as the project root, so it lives at ROOT.
      const cfgPath = path.join(ROOT, `.firebase.stack-${process.pid}-${ports.hub}.json`);
      writeFileSync(cfgPath, JSON.stringify(cfg, null, 2));
      cleanups.push(() => rmSync(cfgPath, { force: true }));
      const firebaseBin = path.join(ROOT, "node_modules/firebase-tools/lib/bin/firebase.js");
      if (!existsSync(firebaseBin))
        throw new StackError("firebase-tools is not installed: run `npm install`.");
      if (firebaseServices.includes("functions") && !existsSync(path.join(ROOT, "functions/lib/index.js"))) {
        throw new StackError("functions/lib is missing: run `npm run build` first.");
      }
      log(`Starting firebase emulators (${firebaseServices.join(", ")})`);
      const child = spawn(
        process.execPath,
        [
          firebaseBin,
          "emulators:start",
          "--only",
          firebaseServices.join(","),
          "--project",
          PROJECT_ID,
          "--config",
          cfgPath,
        ],
        { cwd: ROOT, detached: true, stdio: ["ignore", "pipe", "pipe"], env: fnEnv },
      );
      started.push({ pid: child.pid, signal: "SIGINT", name: "firebase" });
      liveGroups.set(child.pid, "SIGINT");
      const output = tail(child, 120);
      if (options.onOutput) {
        child.stdout.on("data", options.onOutput);
        child.stderr.on("data", options.onOutput);
      }
      const timeoutMs = 180_000;
      if (firebaseServices.includes("auth")) {
        await waitForHttp(`http://127.0.0.1:${ports.auth}/`, {
          child,
          output,
          what: "The auth emulator",
          timeoutMs,
        });
        env.FIREBASE_AUTH_EMULATOR_HOST = `127.0.0.1:${ports.auth}`;
      }
      if (firebaseServices.includes("functions")) {
        const okUrl = `http://127.0.0.1:${ports.functions}/${PROJECT_ID}/${REGION}/api/ok`;
        await waitForHttp(okUrl, { child, output, what: "The functions emulator", timeoutMs });
      }
      if (firebaseServices.includes("hosting")) {
        await waitForHttp(`http://127.0.0.1:${ports.hosting}/`, {
          child,
          output,
          what: "The hosting emulator",
          timeoutMs,
        });
      }
      if (firebaseServices.includes("firestore")) {
        await waitForHttp(`http://127.0.0.1:${ports.firestore}/`, {
          child,
          output,
          what: "firebase-tools' Firestore emulator",
          timeoutMs,
        });
        env.FIRESTORE_EMULATOR_HOST = `127.0.0.1:${ports.firestore}`;
      }
      started.at(-1).output = output;
    }
  } catch (err) {
    await stop();
    throw err;
  }
  const urls = {
    api: services.includes("functions")
      ? `http://127.0.0.1:${ports.functions}/${PROJECT_ID}/${REGION}/api`
      : undefined,
    web: services.includes("hosting") ? `http://127.0.0.1:${ports.hosting}` : undefined,
    auth: services.includes("auth") ? `http://127.0.0.1:${ports.auth}` : undefined,
    firestore: env.FIRESTORE_EMULATOR_HOST ? `http://${env.FIRESTORE_EMULATOR_HOST}` : undefined,
  };
  return {
    ports,
    env: { ...env, GCLOUD_PROJECT: PROJECT_ID },
    urls,
    pids: started.map((s) => s.pid),
    stop,
  };
}

function parseArgs(argv) {
  const opts = { ports: {} };
  const unknown = (arg) =>
    new StackError(
      `Unknown argument ${arg}. Try --ports=auto, --<emulator>-port=N (e.g. --functions-port=5002) ` +
        `or --only=firestore,functions,auth,hosting.`,
    );
  for (const arg of argv) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!m) throw unknown(arg);
    const [, key, value] = m;
    if (key === "ports" && value === "auto") opts.ports = "auto";
    else if (key === "only") opts.services = value.split(",");
    else if (key.endsWith("-port") && /^\d+$/.test(value ?? "")) {
      if (opts.ports !== "auto") opts.ports[key.slice(0, -5)] = Number(value);
    } else throw unknown(arg);
  }
  return opts;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  let stopping = false;
  let stack;
  const shutdown = async (sig) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n[quarry] ${sig}: stopping the emulators…`);
    if (stack) await stack.stop();
    for (const [pid, signal] of liveGroups) await stopGroup(pid, signal);
    console.log("[quarry] stopped.");
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  const passThrough = ["VERTEX_AI_EMULATOR_HOST", "BIGQUERY_EMULATOR_HOST", "GOOGLE_APPLICATION_CREDENTIALS"];
  const env = Object.fromEntries(passThrough.filter((k) => process.env[k]).map((k) => [k, process.env[k]]));
  stack = await startStack({
    ...opts,
    env,
    rules: path.join(ROOT, "firestore.rules"),
    log: (l) => console.log(`[quarry] ${l}`),
    onOutput: (chunk) => process.stdout.write(chunk),
  });
  console.log("");
  console.log(`[quarry] Web app:      ${stack.urls.web ?? "(hosting not started)"}`);
  console.log(`[quarry] API base URL: ${stack.urls.api ?? "(functions not started)"}`);
  console.log(
    `[quarry] Auth emulator: ${stack.urls.auth ?? "-"}   Firestore emulator: ${stack.urls.firestore ?? "-"}`,
  );
  if (stack.urls.api) {
    for (const line of await modelLines(stack.urls.api)) console.log(`[quarry] ${line}`);
    for (const line of accessLines(process.env)) console.log(`[quarry] ${line}`);
  }
  console.log("[quarry] Ready. Press Ctrl-C to stop.");
}

/**
 * The access-policy line(s) of the start-up banner, from the settings the function was given: the
 * local open policy unless QUARRY_ALLOWED_DOMAINS or QUARRY_ADMINS is set (then the closed one).
 */
export function accessLines(env) {
  const domains = (env.QUARRY_ALLOWED_DOMAINS ?? "").trim();
  const admins = (env.QUARRY_ADMINS ?? "").trim();
  if (!domains && !admins) {
    return [
      "Access: local open policy — every account of the Auth emulator (and the page's test user) may use Quarry, as an admin.",
      "Access: to try the closed policy: QUARRY_ALLOWED_DOMAINS=example.com QUARRY_ADMINS=you@example.com npm start",
    ];
  }
  return [
    `Access: closed — verified emails in ${domains || "(no domain)"} are members; admins: ${admins || "(none from settings)"}; ` +
      "others are refused (403).",
  ];
}

/**
 * The model line(s) of the start-up banner, from the function itself (`GET /client-config`), so
 * they say what the running function will use: one line naming the provider and model, or what
 * is wrong and the three ways to get a model, one line each.
 */
export async function modelLines(apiUrl) {
  let model;
  try {
    const res = await fetch(`${apiUrl}/client-config`);
    model = (await res.json()).model;
  } catch (err) {
    return [`Model: unknown (GET /client-config failed: ${err.message})`];
  }
  if (!model) return ["Model: unknown (the function did not say)"];
  if (model.ready) {
    return [`Model: ${model.providerName} · ${model.model}${model.endpoint ? ` at ${model.endpoint}` : ""}`];
  }
  return [
    `Model: NOT CONFIGURED. ${model.message}`,
    ...model.setup.map((o, i) => `  ${i + 1}. ${o.title}: ${o.command}${o.link ? `   (${o.link})` : ""}`),
  ];
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(`[quarry] ${err instanceof StackError ? err.message : err.stack}`);
    process.exit(1);
  });
}
