/** One question and everything the agent did for it: phases, retries, queries, the answer. */
import { MAX_QUESTION_CHARS, splitFollowUps, type View } from "@quarry/functions/contract";
import { useState, type FormEvent } from "react";
import { Clarification } from "./Clarification";
import { Investigation } from "./Investigation";
import { Markdown } from "./Markdown";
import { AttachmentList } from "./Attachments";
import { FeedbackBar, type SendFeedback } from "./FeedbackBar";
import type { Phase, Turn } from "./model";
import { DefinitionsUsed } from "./DefinitionsUsed";
import { HowComputed } from "./HowComputed";
import { BusinessResult } from "./BusinessResult";
import { formatBytes, formatCount } from "../data/format";
import { QueryCard } from "../results/QueryCard";
import { ConnectBigQueryButton } from "../access/BigQueryConnect";
import type { Settings } from "../settings/useSettings";
import { canSchedule } from "../schedules/source";

const STEPS: { phase: Phase; label: string }[] = [
  { phase: "planning", label: "Planning" },
  { phase: "querying", label: "Querying" },
  { phase: "verifying", label: "Checking" },
  { phase: "answering", label: "Answering" },
];
const ORDER: Phase[] = [
  "ingress",
  "planning",
  "asking",
  "querying",
  "verifying",
  "answering",
  "summarizing",
  "done",
];

interface Props {
  turn: Turn;
  settings: Settings;
  onPageSizeChange(size: number): void;
  /** Votes on this turn's answer; absent where feedback cannot be sent. */
  onFeedback?: SendFeedback;
  /** Answers this turn's clarifying question; absent when it cannot be answered now. */
  onAnswer?(answer: string): void;
  /** Asks this turn's question again (same words: regenerate; new words: edit); absent while a run streams. */
  onAskAgain?(question: string): void;
  /** Opens "Schedule…" for this answer; shown only when it ran SQL. */
  onSchedule?(): void;
  /** `business`: the answer, key figures or chart and how it was computed, SQL and rows behind Details. */
  view?: View;
  /** "Ask the data team to verify" for an answer written for this question; absent where it cannot be asked. */
  onVerify?(): Promise<unknown>;
}

/** What the turn asked the person: a clarifying question, or an investigation's plan (and its progress). */
function Asked({ turn, onAnswer }: { turn: Turn; onAnswer?(answer: string): void }) {
  return (
    <>
      {turn.clarification && <Clarification clarification={turn.clarification} onAnswer={onAnswer} />}
      {turn.investigation && <Investigation investigation={turn.investigation} onAnswer={onAnswer} />}
    </>
  );
}

/** The question, with an Edit button that turns it into a box to change and resend it. */
function Question({ turn, onAskAgain }: { turn: Turn; onAskAgain?(question: string): void }) {
  const { question: text, attachments } = turn;
  const [editing, setEditing] = useState<string | null>(null);
  if (editing === null || !onAskAgain) {
    return (
      <div className="question">
        <h2 className="sr-only">Question</h2>
        {attachments?.length ? <AttachmentList items={attachments} /> : null}
        {text && <p>{text}</p>}
        {onAskAgain && (
          <button type="button" className="link small" onClick={() => setEditing(text)}>
            Edit
          </button>
        )}
      </div>
    );
  }
  const save = (e: FormEvent) => {
    e.preventDefault();
    if (!editing.trim()) return;
    setEditing(null);
    onAskAgain(editing);
  };
  return (
    <form className="question editing" onSubmit={save}>
      <label htmlFor="edit-question" className="sr-only">
        Edit the question
      </label>
      <textarea
        id="edit-question"
        rows={2}
        maxLength={MAX_QUESTION_CHARS}
        value={editing}
        onChange={(e) => setEditing(e.target.value)}
        onKeyDown={(e) => e.key === "Escape" && setEditing(null)}
      />
      <button type="submit" className="primary" disabled={!editing.trim()}>
        Save and ask
      </button>
      <button type="button" onClick={() => setEditing(null)}>
        Cancel
      </button>
    </form>
  );
}

function Phases({ phase }: { phase?: Phase }) {
  const at = ORDER.indexOf(phase ?? "ingress");
  const current =
    STEPS.find((s) => s.phase === phase)?.label ?? (phase === "summarizing" ? "Tidying up" : "Starting");
  return (
    <div className="phases">
      <ol aria-hidden="true">
        {STEPS.map((s) => {
          const i = ORDER.indexOf(s.phase);
          return (
            <li key={s.phase} className={i < at ? "past" : i === at ? "now" : "next"}>
              {s.label}
            </li>
          );
        })}
      </ol>
      <span className="sr-only" role="status">
        {current}
      </span>
    </div>
  );
}

/** Under a finished turn: Regenerate, Schedule… (an answer that ran SQL) and what it used. */
function TurnFooter({ turn, onAskAgain, onSchedule }: Pick<Props, "turn" | "onAskAgain" | "onSchedule">) {
  return (
    <>
      {turn.status !== "asking" && onAskAgain && (
        <button type="button" className="link small" onClick={() => onAskAgain(turn.question)}>
          Regenerate
        </button>
      )}
      {onSchedule && canSchedule(turn) && (
        <button type="button" className="link small" onClick={onSchedule}>
          Schedule…
        </button>
      )}
      {turn.usage && (
        <p className="usage small muted">
          {formatCount(turn.usage.modelCalls)} model call{turn.usage.modelCalls === 1 ? "" : "s"} ·{" "}
          {formatCount(turn.usage.totalTokens)} tokens · {formatBytes(turn.usage.bytesBilled)} billed
        </p>
      )}
    </>
  );
}

export function TurnView(props: Props) {
  const { turn, settings, onPageSizeChange, onFeedback, onAnswer, onAskAgain, onSchedule, view, onVerify } =
    props;
  const live = turn.status === "streaming";
  // The follow-ups' block at the end of the answer is never shown as text (the server sends them apart).
  const answer = splitFollowUps(turn.answer).body;
  const cards = turn.queries.map((q, i) => (
    <QueryCard
      key={q.id}
      query={q}
      index={i}
      question={turn.question}
      settings={settings}
      onPageSizeChange={onPageSizeChange}
    />
  ));
  return (
    <article className="turn" data-status={turn.status} aria-busy={live}>
      <Question turn={turn} onAskAgain={live ? undefined : onAskAgain} />
      <div className="response">
        {live && <Phases phase={turn.phase} />}
        {turn.retries.length > 0 && (
          <ul className="retries" aria-label="Retries">
            {turn.retries.map((r) => (
              <li key={r.attempt}>
                <strong>
                  Retry {r.attempt} of {r.maxRetries}:
                </strong>{" "}
                {r.reason}
              </li>
            ))}
          </ul>
        )}
        <Asked turn={turn} onAnswer={turn.status === "asking" ? onAnswer : undefined} />
        {view === "business" ? (
          <BusinessResult queries={turn.queries} question={turn.question} settings={settings}>
            {cards}
          </BusinessResult>
        ) : (
          cards
        )}
        {(answer || (live && turn.phase !== "asking")) && (
          <div className="answer" aria-live={live ? "polite" : undefined}>
            <h2 className="sr-only">Answer</h2>
            {answer ? <Markdown text={answer} streaming={live} /> : <p className="muted">Thinking…</p>}
            {live && answer && <span className="cursor" aria-hidden="true" />}
          </div>
        )}
        {turn.computed && !live ? (
          <HowComputed computed={turn.computed} {...(onVerify ? { onVerify } : {})} />
        ) : (
          !!turn.definitions?.length && <DefinitionsUsed definitions={turn.definitions} />
        )}
        {live && turn.reconnecting && (
          <p className="notice" role="status">
            Connection lost — the answer goes on, and continues here when you are back online.
          </p>
        )}
        {turn.status === "stopped" && (
          <p className="notice" role="status">
            Stopped. {turn.answer ? "The answer above is incomplete." : "Ask again when you are ready."}
          </p>
        )}
        {turn.status === "error" && turn.error && (
          <p className="error" role="alert">
            {turn.error}
          </p>
        )}
        {turn.status === "error" && turn.errorCode === "auth:bigquery_consent" && <ConnectBigQueryButton />}
        {turn.status === "done" && turn.answer && onFeedback && <FeedbackBar send={onFeedback} />}
        {!live && <TurnFooter turn={turn} onAskAgain={onAskAgain} onSchedule={onSchedule} />}
      </div>
    </article>
  );
}
