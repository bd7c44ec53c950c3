/**
 * Thumbs up or down on an answer, with an optional note. An up-vote on an answer that ran SQL is
 * proposed as a verified example, which a person reviews (`npm run feedback`) before it is used.
 */
import { MAX_NOTE_CHARS } from "@quarry/functions/contract";
import { useState, type FormEvent } from "react";
import { errorInWords } from "../data/format";

export type SendFeedback = (score: 1 | -1, note?: string) => Promise<{ status: string }>;

export function FeedbackBar({ send }: { send: SendFeedback }) {
  const [score, setScore] = useState<1 | -1 | null>(null);
  const [note, setNote] = useState("");
  const [state, setState] = useState<"idle" | "sending" | "sent" | "noted">("idle");
  const [error, setError] = useState<string | null>(null);

  const vote = async (s: 1 | -1, withNote?: string) => {
    setScore(s);
    setState("sending");
    setError(null);
    try {
      await send(s, withNote);
      setState(withNote ? "noted" : "sent");
    } catch (e) {
      setError(errorInWords(e));
      setState("idle");
    }
  };
  const submitNote = (e: FormEvent) => {
    e.preventDefault();
    if (score && note.trim()) void vote(score, note.trim());
  };

  return (
    <div className="feedback small" aria-label="Feedback on this answer" role="group">
      <button
        type="button"
        className="icon"
        aria-label="Good answer"
        aria-pressed={score === 1}
        disabled={state === "sending"}
        onClick={() => void vote(1)}
      >
        👍
      </button>
      <button
        type="button"
        className="icon"
        aria-label="Bad answer"
        aria-pressed={score === -1}
        disabled={state === "sending"}
        onClick={() => void vote(-1)}
      >
        👎
      </button>
      {state === "sent" && (
        <form onSubmit={submitNote} className="feedback-note">
          <span role="status">Thanks, noted.</span>
          <label>
            <span className="sr-only">Add a note</span>
            <input
              value={note}
              maxLength={MAX_NOTE_CHARS}
              placeholder="Add a note (optional)"
              onChange={(e) => setNote(e.target.value)}
            />
          </label>
          <button type="submit" disabled={!note.trim()}>
            Send note
          </button>
        </form>
      )}
      {state === "noted" && <span role="status">Thanks for the note.</span>}
      {error && (
        <span className="error" role="alert">
          {error}
        </span>
      )}
    </div>
  );
}
