import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { withTimeout } from "../../functions/src/timeout";

class SlowError extends Error {}

/** A promise and the functions that settle it. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("withTimeout", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("settles like the promise when it settles in time, and leaves no timer behind", async () => {
    const ok = withTimeout(Promise.resolve(42), 1_000, () => "late");
    await expect(ok).resolves.toBe(42);
    const failed = withTimeout(Promise.reject(new SlowError("own")), 1_000, () => "late");
    await expect(failed).rejects.toThrow("own");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("resolves with onTimeout's value once ms pass, and not before", async () => {
    const never = deferred<number>();
    const onTimeout = vi.fn(() => "fallback" as const);
    const result = withTimeout(never.promise, 1_000, onTimeout);
    await vi.advanceTimersByTimeAsync(999);
    expect(onTimeout).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    await expect(result).resolves.toBe("fallback");
    // The promise's later rejection is handled (no unhandled rejection fails this test).
    never.reject(new Error("too late"));
  });

  it("rejects with the error onTimeout throws (within's StorageTimeout)", async () => {
    const result = withTimeout(new Promise(() => {}), 50, () => {
      throw new SlowError("reading took longer than 50 ms");
    });
    const settled = expect(result).rejects.toBeInstanceOf(SlowError);
    await vi.advanceTimersByTimeAsync(50);
    await settled;
  });

  it("keeps the timeout's outcome when the promise settles while onTimeout is still working", async () => {
    const work = deferred<string>();
    const cancelling = deferred<void>();
    const result = withTimeout(work.promise, 10, async () => {
      await cancelling.promise;
      throw new SlowError("cancelled");
    });
    const settled = expect(result).rejects.toBeInstanceOf(SlowError);
    await vi.advanceTimersByTimeAsync(10);
    work.resolve("value");
    cancelling.resolve();
    await settled;
  });

  it("gives up when the signal aborts: onAbort decides, by default the signal's reason", async () => {
    const abort = new AbortController();
    const decided = withTimeout(new Promise(() => {}), 1_000, () => "timeout", {
      signal: abort.signal,
      onAbort: (reason) => `aborted: ${String(reason)}`,
    });
    abort.abort("stop");
    await expect(decided).resolves.toBe("aborted: stop");
    expect(vi.getTimerCount()).toBe(0);

    const already = AbortSignal.abort(new SlowError("cancelled before"));
    await expect(
      withTimeout(new Promise(() => {}), 1_000, () => "timeout", { signal: already }),
    ).rejects.toThrow("cancelled before");
  });
});
