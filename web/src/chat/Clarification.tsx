/**
 * The agent's clarifying question in a turn: while it waits, its choices as buttons and a box for
 * an answer of one's own; once answered, the question and the answer given.
 */
import { MAX_ANSWER_CHARS } from "@quarry/functions/contract";
import { useState, type FormEvent } from "react";
import type { ClarificationView } from "./model";

interface Props {
  clarification: ClarificationView;
  /** Set while the turn waits for the answer (and no other run is streaming). */
  onAnswer?(answer: string): void;
}

export function Clarification({ clarification, onAnswer }: Props) {
  const [own, setOwn] = useState("");
  const { question, choices, answer } = clarification;
  const send = (e: FormEvent) => {
    e.preventDefault();
    if (own.trim()) onAnswer?.(own.trim());
  };
  return (
    <div className="clarification" role="group" aria-label="Question from Quarry">
      <p className="asked">{question}</p>
      {answer !== undefined ? (
        <p className="answered small">
          You answered: <strong>{answer}</strong>
        </p>
      ) : (
        <>
          {choices.length > 0 && (
            <ul className="choices">
              {choices.map((c) => (
                <li key={c}>
                  <button type="button" className="chip" disabled={!onAnswer} onClick={() => onAnswer?.(c)}>
                    {c}
                  </button>
                </li>
              ))}
            </ul>
          )}
          <form className="own-answer" onSubmit={send}>
            <label htmlFor="own-answer" className="sr-only">
              Your answer
            </label>
            <input
              id="own-answer"
              maxLength={MAX_ANSWER_CHARS}
              placeholder={choices.length ? "Or answer in your own words…" : "Your answer…"}
              value={own}
              onChange={(e) => setOwn(e.target.value)}
            />
            <button type="submit" disabled={!onAnswer || !own.trim()}>
              Answer
            </button>
          </form>
        </>
      )}
    </div>
  );
}
