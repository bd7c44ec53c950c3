/**
 * How Quarry's Firestore client is set up: the settings it is given before its first call
 * (`tuneFirestore`, called by services.ts), each for a cost or a failure measured on the real client.
 */

/** The settings Quarry's Firestore client runs with, and its call options built once. */
export function tuneFirestore(db: { settings(s: object): void }): void {
  db.settings({ ignoreUndefinedProperties: true });
  buildRetryOnce(db);
}

/**
 * One module resolution a Firestore call fewer. `@google-cloud/firestore` 9 builds each call's
 * retry settings with `require("google-gax/fallback")` inside `createCallOptions`; Node does not
 * cache how a package's "exports" subpath resolves for a module that did not load it first, so every
 * unary call (a commit, a get) stats files and reads package.json again: about 3.5 ms of CPU a run
 * (`run-cost`'s profile, docs/benchmarks.md). The client's own result is kept per method and retry
 * codes, and each call gets a fresh copy of it: the same options, built once.
 */

interface CallOptions {
  retry?: object;
  [key: string]: unknown;
}
type Build = (this: unknown, methodName: string, retryCodes?: number[]) => CallOptions;

const DONE = Symbol.for("quarry.firestoreRetryOnce");

/** Keeps each method's retry settings in `db`'s class (once per class; any other shape is left alone). */
export function buildRetryOnce(db: object): void {
  const proto = Object.getPrototypeOf(db) as Record<string | symbol, unknown>;
  const build = proto.createCallOptions as Build | undefined;
  if (typeof build !== "function" || proto[DONE]) return;
  const retries = new Map<string, object>();
  const once: Build = function (this: unknown, methodName, retryCodes) {
    if (!retryCodes) return build.call(this, methodName);
    const key = `${methodName}:${retryCodes.join(",")}`;
    let retry = retries.get(key);
    if (!retry) {
      // Built for keeping, never handed to a call: nothing a call does to its options reaches it.
      retry = build.call(this, methodName, retryCodes).retry;
      if (!retry) return build.call(this, methodName, retryCodes);
      retries.set(key, retry);
    }
    // A copy of the client's own RetryOptions per call, as the client makes one per call.
    return {
      ...build.call(this, methodName),
      retry: Object.assign(Object.create(Object.getPrototypeOf(retry) as object) as object, retry),
    };
  };
  proto.createCallOptions = once;
  proto[DONE] = true;
}
