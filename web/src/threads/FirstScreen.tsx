/**
 * The empty conversation: what Quarry does, questions to start with (the team's authored starters,
 * else its most asked questions, else general examples) and the datasets it can answer about.
 */
import type { FirstScreen as FirstScreenData } from "@quarry/functions/contract";

const EXAMPLES = [
  "Which tables can I query?",
  "What were total sales by month last year?",
  "Top 10 customers by revenue",
];

interface Props {
  data: FirstScreenData | null;
  /** Asks a starter question at once. */
  onAsk(question: string): void;
  /** Puts an example in the question box, to edit before sending. */
  onPick(question: string): void;
}

export function FirstScreen({ data, onAsk, onPick }: Props) {
  const starters = data?.starters ?? [];
  return (
    <div className="empty">
      <h2>Ask your data a question</h2>
      <p className="muted">Quarry writes the SQL, runs it read-only and shows you the rows and a chart.</p>
      {starters.length > 0 ? (
        <nav aria-label="Questions to start with">
          <h3 className="small muted">
            {data?.startersFrom === "team" ? "Asked most by your team" : "Start with"}
          </h3>
          <ul className="examples starters">
            {starters.map((q) => (
              <li key={q}>
                <button type="button" className="chip" onClick={() => onAsk(q)}>
                  {q}
                </button>
              </li>
            ))}
          </ul>
        </nav>
      ) : (
        <ul className="examples">
          {EXAMPLES.map((x) => (
            <li key={x}>
              <button type="button" className="chip" onClick={() => onPick(x)}>
                {x}
              </button>
            </li>
          ))}
        </ul>
      )}
      {!!data?.datasets.length && (
        <section className="datasets" aria-label="Datasets you can ask about">
          <h3 className="small muted">Datasets you can ask about</h3>
          <ul>
            {data.datasets.map((d) => (
              <li key={d.name}>
                <strong>{d.name}</strong>
                {d.tables.length > 0 && <span className="muted small"> — {d.tables.join(", ")}</span>}
              </li>
            ))}
          </ul>
        </section>
      )}
    </div>
  );
}
