/** The questions to ask next, as buttons that ask them (shown above the composer, so a long answer never hides them). */
export function FollowUps({ questions, onAsk }: { questions: string[]; onAsk(question: string): void }) {
  return (
    <nav className="follow-ups" aria-label="Follow-up questions">
      <h3 className="small muted">Ask next</h3>
      <ul>
        {questions.map((q) => (
          <li key={q}>
            <button type="button" className="chip" onClick={() => onAsk(q)}>
              {q}
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}
