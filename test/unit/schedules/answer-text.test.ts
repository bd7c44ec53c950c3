/**
 * The first line of a scheduled answer, in its one home (schedules/answer-text.ts): what the
 * schedule's summary, the notification and mail body, and the webhook message say first. An
 * answer that opens with the SQL in a code block, a heading or a table still yields its prose.
 */
import { describe, expect, it } from "vitest";
import { firstProseLine, proseLines } from "../../../functions/src/schedules/answer-text";
import { webhookMessage } from "../../../functions/src/schedules/webhook-message";

const OPENS_WITH_SQL = [
  "```sql",
  "SELECT month, SUM(total) AS revenue",
  "FROM shop.orders GROUP BY month",
  "```",
  "",
  "## Revenue",
  "Revenue fell 21% in March, to $41,200.",
  "| month | revenue |",
  "| --- | --- |",
  "| 2025-03 | 41200 |",
  "April recovered.",
].join("\n");

describe("a scheduled answer's first lines", () => {
  it("skip a code block, a table and the heading's marks", () => {
    expect(firstProseLine(OPENS_WITH_SQL)).toBe("Revenue");
    expect(proseLines(OPENS_WITH_SQL, 3)).toEqual([
      "Revenue",
      "Revenue fell 21% in March, to $41,200.",
      "April recovered.",
    ]);
  });

  it("never give the SQL or the fence itself, even unclosed", () => {
    const unclosed = "```sql\nSELECT * FROM shop.orders";
    expect(firstProseLine(unclosed)).toBe("");
    expect(firstProseLine("~~~\nSELECT 1\n~~~\nDone.")).toBe("Done.");
  });

  it("are cut at their limit", () => {
    expect(firstProseLine("x".repeat(900))).toHaveLength(500);
    expect(firstProseLine("x".repeat(900), 20)).toHaveLength(20);
  });

  it("are what the webhook message carries", () => {
    const { text } = webhookMessage({
      name: "Revenue",
      threadId: "t1",
      appUrl: "https://quarry.example.test",
      answer: OPENS_WITH_SQL,
    });
    expect(text).not.toContain("SELECT");
    expect(text).not.toContain("```");
    expect(text).toContain("Revenue fell 21% in March, to $41,200.");
  });
});
