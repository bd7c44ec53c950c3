/**
 * Running a plan's steps (agent/investigation/run.ts): the wall-time budget cancels a step still
 * running when it runs out, and no later step starts. The running step waits on its own signal, so
 * the test holds it at a known point instead of timing it.
 */
import { describe, expect, it } from "vitest";
import type { PlanStep, StepOutcome } from "../../functions/src/contract/investigations";
import { runSteps } from "../../functions/src/agent/investigation/run";
import { PLANTED_PLAN } from "../support/investigation-script";

const steps: PlanStep[] = PLANTED_PLAN.steps.slice(0, 3);

describe("the investigation's time budget", () => {
  it("cancels the step running when the time is up, and starts none after it", async () => {
    const started: number[] = [];
    let clock = 0;
    const outcomes = await runSteps(steps, {
      parallel: 1,
      seconds: 0.05,
      now: () => clock,
      onStart: (s) => started.push(s.id),
      run: (step, signal) =>
        new Promise<StepOutcome>((_resolve, reject) => {
          // Held until the budget's own timer aborts it; the clock then reads past the deadline.
          signal.addEventListener("abort", () => {
            clock = 60_000;
            reject(signal.reason as Error);
          });
        }),
    });
    expect(started).toEqual([steps[0].id]);
    expect(outcomes.map((o) => o.status)).toEqual(["skipped", "skipped", "skipped"]);
    expect(outcomes[0].reason).toMatch(
      /cancelled: the investigation's time budget \(0.05 s\) ran out while it ran/,
    );
    expect(outcomes[1].reason).toMatch(/not started: the investigation's time budget/);
  });

  it("a Stop of the run is not a budget: it is thrown, not reported", async () => {
    const stop = new AbortController();
    const run = runSteps(steps, {
      parallel: 2,
      seconds: 600,
      now: () => 0,
      signal: stop.signal,
      onStart: () => stop.abort(new Error("stopped by the person")),
      run: (_step, signal) =>
        new Promise<StepOutcome>((_resolve, reject) => {
          if (signal.aborted) reject(signal.reason as Error);
          signal.addEventListener("abort", () => reject(signal.reason as Error));
        }),
    });
    await expect(run).rejects.toThrow("stopped by the person");
  });
});
