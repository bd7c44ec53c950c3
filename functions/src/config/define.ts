/**
 * How a setting is declared: once, with its name, type, default, bounds and description. The same
 * declaration reads the value (validated) and documents it: `docs/configuration.md` is generated
 * from the declarations (`npm run docs`) and a unit test fails when the page and they differ.
 */

/** An environment: `process.env` in the function, a plain object in tests. */
export type Env = Record<string, string | undefined>;

/** Raised when the environment cannot work; the message says what to set. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

/** Where a setting is read and who sets it (a section of the configuration page). */
type SettingScope =
  | "deploy" // a firebase-functions param: asked on deploy or read from functions/.env.<project>
  | "runtime" // read by the function at run time
  | "platform" // set by Google Cloud, firebase-tools or `npm start`, not by hand
  | "web" // the page's Vite build (`vite dev` against a running stack)
  | "tooling"; // the launcher, the test harness and CI

/** What the configuration page shows about one setting. */
export interface SettingDoc {
  readonly name: string;
  /** The concern it belongs to (the config/ module that declares it). */
  readonly concern: string;
  readonly scope: SettingScope;
  /** `integer`, `number`, `text`, `list`, `flag`, `one of: a, b`, `pairs`. */
  readonly type: string;
  /** The default as the page shows it (a derived default is described in words). */
  readonly default: string;
  /** Bounds beyond the type, e.g. `≤ 60`. */
  readonly bounds?: string;
  readonly description: string;
}

/** A declared setting: its documentation and how to read it. */
export interface Setting<T> {
  readonly doc: SettingDoc;
  read(env: Env): T;
}

interface Common {
  concern: string;
  description: string;
  scope?: SettingScope;
}

function doc(name: string, c: Common, type: string, dflt: string, bounds?: string): SettingDoc {
  return {
    name,
    concern: c.concern,
    scope: c.scope ?? "runtime",
    type,
    default: dflt,
    ...(bounds ? { bounds } : {}),
    description: c.description,
  };
}

function raw(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  return v === undefined || v === "" ? undefined : v;
}

function readNumber(
  env: Env,
  name: string,
  fallback: number,
  integer: boolean,
  min?: number,
  max?: number,
): number {
  const text = raw(env, name);
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isFinite(n) || n < 0) {
    throw new ConfigError(`${name} must be a non-negative number, got "${env[name]}".`);
  }
  if (integer && !Number.isInteger(n))
    throw new ConfigError(`${name} must be a whole number, got "${env[name]}".`);
  if (min !== undefined && n < min) throw new ConfigError(`${name} must be at least ${min}, got ${n}.`);
  if (max !== undefined && n > max) throw new ConfigError(`${name} must be at most ${max}, got ${n}.`);
  return n;
}

function boundsText(min?: number, max?: number, why?: string): string | undefined {
  const parts = [min !== undefined ? `≥ ${min}` : "", max !== undefined ? `≤ ${max}` : ""].filter(Boolean);
  if (!parts.length) return undefined;
  return parts.join(", ") + (why ? ` (${why})` : "");
}

interface NumberOptions extends Common {
  default: number;
  /** The default in words when it is derived (the number is then only a fallback for tests). */
  defaultText?: string;
  min?: number;
  max?: number;
  /** Why the bounds are what they are; also said in the error. */
  boundsWhy?: string;
}

function numeric(name: string, o: NumberOptions, integer: boolean): Setting<number> {
  return {
    doc: doc(
      name,
      o,
      integer ? "integer" : "number",
      o.defaultText ?? `\`${o.default}\``,
      boundsText(o.min, o.max, o.boundsWhy),
    ),
    read: (env) => {
      try {
        return readNumber(env, name, o.default, integer, o.min, o.max);
      } catch (e) {
        if (e instanceof ConfigError && o.boundsWhy && /must be at (least|most)/.test(e.message)) {
          throw new ConfigError(e.message.replace(/, got/, ` (${o.boundsWhy}), got`));
        }
        throw e;
      }
    },
  };
}

/** A whole number ≥ 0. */
export function int(name: string, o: NumberOptions): Setting<number> {
  return numeric(name, o, true);
}

/** A number ≥ 0. */
export function num(name: string, o: NumberOptions): Setting<number> {
  return numeric(name, o, false);
}

/** Text; unset or blank reads as `undefined`. */
export function text(name: string, o: Common & { defaultText?: string }): Setting<string | undefined> {
  return { doc: doc(name, o, "text", o.defaultText ?? "unset"), read: (env) => raw(env, name) };
}

/** Text with a fixed default. */
export function textOr(name: string, o: Common & { default: string }): Setting<string> {
  return { doc: doc(name, o, "text", `\`${o.default}\``), read: (env) => raw(env, name) ?? o.default };
}

/** `true`/`false`; anything else than the opposite of the default reads as the default. */
export function flag(
  name: string,
  o: Common & { default: boolean; on?: string; off?: string },
): Setting<boolean> {
  const off = o.off ?? "false";
  const on = o.on ?? "true";
  return {
    doc: doc(name, o, `flag (\`${on}\` / \`${off}\`)`, `\`${o.default ? on : off}\``),
    read: (env) => (o.default ? raw(env, name) !== off : raw(env, name) === on),
  };
}

/** One of a few words. */
export function oneOf<T extends string>(
  name: string,
  o: Common & { allowed: readonly T[]; default?: T; defaultText?: string },
): Setting<T | undefined> {
  return {
    doc: doc(
      name,
      o,
      `one of ${o.allowed.map((a) => `\`${a}\``).join(", ")}`,
      o.defaultText ?? `\`${o.default}\``,
    ),
    read: (env) => {
      const v = raw(env, name);
      if (v === undefined) return o.default;
      if (!(o.allowed as readonly string[]).includes(v)) {
        throw new ConfigError(`${name} must be one of ${o.allowed.join(", ")}, got "${v}".`);
      }
      return v as T;
    },
  };
}

/** Comma-separated words, trimmed, blanks dropped. */
export function list(name: string, o: Common & { defaultText?: string }): Setting<string[]> {
  return {
    doc: doc(name, o, "list (comma-separated)", o.defaultText ?? "(none)"),
    read: (env) => splitList(env[name]),
  };
}

/** `name=value,name2=value2` → { name: value, name2: value2 }. */
export function pairs(name: string, o: Common): Setting<Record<string, string>> {
  return {
    doc: doc(name, o, "pairs (`table=path,…`)", "(none)"),
    read: (env) => {
      const out: Record<string, string> = {};
      for (const item of splitList(env[name])) {
        const eq = item.indexOf("=");
        if (eq <= 0) throw new ConfigError(`${name} entries look like table=path, got "${item}".`);
        out[item.slice(0, eq).trim()] = item.slice(eq + 1).trim();
      }
      return out;
    },
  };
}

/**
 * A variable documented here but read elsewhere (Google Cloud, firebase-tools, the launcher, the
 * test harness, the page's build): declared so the page lists it and the doc check knows it.
 */
export function documented(name: string, o: Common & { type?: string; defaultText: string }): SettingDoc {
  return doc(name, o, o.type ?? "text", o.defaultText);
}

function splitList(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Reads every setting of a concern: `{ key: value }` for `{ key: setting }`. */
export function readAll<S extends Record<string, Setting<unknown>>>(
  settings: S,
  env: Env,
): { [K in keyof S]: ReturnType<S[K]["read"]> } {
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(settings)) out[key] = s.read(env);
  return out as { [K in keyof S]: ReturnType<S[K]["read"]> };
}

/** The docs of a concern's declarations, for the registry. */
export function docsOf(settings: Record<string, Setting<unknown> | SettingDoc>): SettingDoc[] {
  return Object.values(settings).map((s) => ("doc" in s ? s.doc : s));
}
