/**
 * Running a plan's steps: at most `parallel` at once, in plan order, inside a wall-time budget.
 * A step not started when the time is up is never started (skipped, with the reason); one still
 * running then is cancelled. The byte budget is enforced by the gate each step goes through
 * (nodes/investigate-steps.ts); this loop only keeps the order, the cap and the clock.
 */
import type { PlanStep, StepOutcome } from "../../contract/investigations";

export interface RunStepsOptions {
  parallel: number;
  /** Wall-time budget, from the start of the steps. */
  seconds: number;
  /** The clock (injectable: tests move it to run a budget out). */
  now: () => number;
  /** The run's own signal: a Stop aborts everything and is rethrown. */
  signal?: AbortSignal;
  run: (step: PlanStep, signal: AbortSignal) => Promise<StepOutcome>;
  onStart?: (step: PlanStep) => void;
  onEnd?: (step: PlanStep, outcome: StepOutcome) => void;
}

/** Every step's outcome, in plan order. */
export async function runSteps(steps: PlanStep[], o: RunStepsOptions): Promise<StepOutcome[]> {
  const deadline = o.now() + o.seconds * 1000;
  const late = new AbortController();
  const timer = setTimeout(() => late.abort(new Error("time budget")), Math.max(deadline - o.now(), 0));
  const outcomes = new Map<number, StepOutcome>();
  let next = 0;
  const timeUp = () => late.signal.aborted || o.now() >= deadline;
  const worker = async () => {
    while (next < steps.length) {
      const step = steps[next++];
      let outcome: StepOutcome;
      if (timeUp()) {
        outcome = {
          id: step.id,
          status: "skipped",
          reason: `not started: the investigation's time budget (${o.seconds} s) ran out`,
        };
      } else {
        o.onStart?.(step);
        const signal = o.signal ? AbortSignal.any([o.signal, late.signal]) : late.signal;
        try {
          outcome = await o.run(step, signal);
        } catch (err) {
          o.signal?.throwIfAborted();
          if (!late.signal.aborted) throw err;
          outcome = {
            id: step.id,
            status: "skipped",
            reason: `cancelled: the investigation's time budget (${o.seconds} s) ran out while it ran`,
          };
        }
      }
      outcomes.set(step.id, outcome);
      o.onEnd?.(step, outcome);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(o.parallel, steps.length) }, worker));
  } finally {
    clearTimeout(timer);
  }
  return steps.map((s) => outcomes.get(s.id)!);
}
