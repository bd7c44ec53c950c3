import { describe, expect, it } from "vitest";
import { evaluate, type Row } from "../../../functions/src/schedules/alerts";
import { MESSAGE_ANSWER_CHARS, webhookMessage } from "../../../functions/src/schedules/webhook-message";
import { threadUrl } from "../../../functions/src/runs/page-links";

const SECRET = "zq-7731-customer@example.com";
const rows: Row[] = Array.from({ length: 50 }, (_, i) => ({
  customer: `${SECRET}-${i}`,
  revenue: String(1000 + i),
}));
const threadId = "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b";

const answer = [
  "Revenue fell last week, mostly in the north.",
  "",
  "| customer | revenue |",
  "|---|---|",
  `| ${SECRET}-0 | 1000 |`,
  "```sql",
  `SELECT * FROM t WHERE customer = '${SECRET}'`,
  "```",
  "The south held steady.",
  "Returns rose.",
  "A fourth line that is not sent.",
].join("\n");

describe("webhookMessage", () => {
  it("carries the name, the alert, the answer's first lines and the thread link, and no rows", () => {
    const alert = evaluate(
      { kind: "change", column: "revenue", direction: "down", percent: 10 },
      rows,
      120_000,
    );
    expect(alert.fired).toBe(true);
    const { text } = webhookMessage({
      name: "Weekly revenue",
      threadId,
      appUrl: "https://quarry.example.com/",
      answer,
      alert: alert.summary,
    });
    expect(text).toBe(
      [
        `*Weekly revenue* — alert: ${alert.summary}`,
        "Revenue fell last week, mostly in the north.",
        "The south held steady.",
        "Returns rose.",
        `Open in Quarry: https://quarry.example.com/t/${threadId}`,
      ].join("\n"),
    );
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain("|");
  });

  it("is bounded however long the answer and name are", () => {
    const long = Array.from({ length: 40 }, (_, i) => `Line ${i} ${"x".repeat(400)}`).join("\n");
    const { text } = webhookMessage({
      name: "n".repeat(1000),
      threadId,
      appUrl: "https://q.example.com",
      answer: long,
      alert: "s".repeat(2000),
    });
    const [title, ...rest] = text.split("\n");
    expect(title.length).toBeLessThan(450);
    const answerPart = rest.slice(0, -1).join("\n");
    expect(answerPart.length).toBeLessThanOrEqual(MESSAGE_ANSWER_CHARS);
    expect(answerPart.endsWith("…")).toBe(true);
    expect(rest.length).toBeLessThanOrEqual(4);
    expect(text.length).toBeLessThan(1_100);
  });

  it("sends a plain scheduled answer without an alert line, and cannot ping a room", () => {
    const { text } = webhookMessage({
      name: "Daily <!channel>",
      threadId: "a b",
      appUrl: "https://q.example.com",
      answer: "Hi <users/all> 5 > 3",
    });
    expect(text).toBe(
      "*Daily ‹!channel›*\nHi ‹users/all› 5 › 3\nOpen in Quarry: https://q.example.com/t/a%20b",
    );
    expect(text).not.toMatch(/[<>]/);
  });

  it("links the page's thread route", () => {
    expect(threadUrl("http://127.0.0.1:5000", "t-1")).toBe("http://127.0.0.1:5000/t/t-1");
  });
});
