/**
 * An investigation in a turn (`/investigate`): the plan to review — each step kept or dropped,
 * then Run or Cancel — with what could not be applied of an answer; then each step's progress.
 * The report itself is the turn's answer (Markdown), and each step's table and chart are its query
 * cards below.
 */
import { useState } from "react";
import type { PlanStep } from "@quarry/functions/contract";
import type { InvestigationView } from "./model";

interface Props {
  investigation: InvestigationView;
  /** Set while the plan waits for the person (and no other run is streaming). */
  onAnswer?(answer: string): void;
}

const KIND: Record<PlanStep["kind"], string> = {
  compare: "comparison",
  breakdown: "breakdown",
  contribution: "contribution",
  drivers: "key drivers",
  trend: "trend",
  forecast: "forecast",
};

function PlanReviewView({ investigation, onAnswer }: Props) {
  const review = investigation.review!;
  const [dropped, setDropped] = useState<number[]>([]);
  const toggle = (id: number) => setDropped((d) => (d.includes(id) ? d.filter((x) => x !== id) : [...d, id]));
  const open = investigation.answered === undefined && !!onAnswer;
  const run = () => onAnswer?.(dropped.length ? JSON.stringify({ drop: dropped }) : "run");
  const { plan, budget } = review;
  return (
    <div className="investigation-plan" role="group" aria-label="Investigation plan">
      <p className="asked">{plan.question}</p>
      <p className="small muted">Hypotheses: {plan.hypotheses.join("; ")}</p>
      <ol className="plan-steps">
        {plan.steps.map((s) => (
          <li key={s.id}>
            <label>
              <input
                type="checkbox"
                checked={!dropped.includes(s.id)}
                disabled={!open}
                onChange={() => toggle(s.id)}
                aria-label={`Keep step ${s.id}: ${s.title}`}
              />{" "}
              {s.title} <span className="muted small">({KIND[s.kind]})</span>
            </label>
          </li>
        ))}
      </ol>
      <p className="small muted">
        Up to {review.parallel} steps at once; at most {budget.seconds} s and {budget.tokens.toLocaleString()}{" "}
        model tokens.
      </p>
      {review.errors?.map((e) => (
        <p key={e} className="error" role="alert">
          {e}
        </p>
      ))}
      {investigation.answered !== undefined ? (
        <p className="answered small">
          You answered: <strong>{investigation.answered}</strong>
        </p>
      ) : (
        <div className="plan-actions">
          <button type="button" disabled={!open || dropped.length === plan.steps.length} onClick={run}>
            Run plan
          </button>
          <button type="button" className="secondary" disabled={!open} onClick={() => onAnswer?.("cancel")}>
            Cancel
          </button>
        </div>
      )}
    </div>
  );
}

export function Investigation({ investigation, onAnswer }: Props) {
  const { steps, report } = investigation;
  return (
    <>
      {investigation.review && <PlanReviewView investigation={investigation} onAnswer={onAnswer} />}
      {steps.length > 0 && (
        <ul className="investigation-steps" aria-label="Investigation steps">
          {steps.map((s) => (
            <li key={s.id} data-status={s.status}>
              Step {s.id}, {s.title}: <strong>{s.status}</strong>
              {s.reason ? <span className="muted small"> — {s.reason}</span> : null}
            </li>
          ))}
        </ul>
      )}
      {report?.writtenBy === "quarry" && (
        <p className="notice small" role="status">
          Quarry wrote this report from the results itself.
        </p>
      )}
    </>
  );
}
