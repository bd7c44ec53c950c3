import { describe, expect, it } from "vitest";
import { answerMessage, keyRows } from "../../../functions/src/chat/google/cards";
import { readChatConfig } from "../../../functions/src/config/chat";
import { functionSecrets } from "../../../functions/src/config/deploy";
import { questionOf } from "../../../functions/src/chat/google/question";

const columns = [
  { name: "channel", type: "STRING" },
  { name: "orders", type: "INT64" },
];

describe("a Google Chat answer card", () => {
  it("lists the key rows as text with how many there were", () => {
    const rows = Array.from({ length: 12 }, (_, i) => ({ channel: `c${i}`, orders: i }));
    const text = keyRows({ columns, rows, totalRows: 30 });
    expect(text.split("\n")[0]).toBe("channel: c0 · orders: 0");
    expect(text.split("\n")).toHaveLength(11);
    expect(text).toContain("<i>10 of 30 rows</i>");
    expect(keyRows({ columns, rows: rows.slice(0, 1), totalRows: 1 })).toContain("<i>1 row</i>");
  });

  it("the answer, the rows, the SQL collapsed with its markup escaped, and Open in Quarry", () => {
    const message = answerMessage({
      answer: "Web leads.",
      result: { columns, rows: [{ channel: "web", orders: 3 }], totalRows: 1 },
      sql: ["SELECT a < b"],
      threadUrl: "https://q.example/t/t1",
    });
    expect(message.text).toBe("Web leads.");
    const sections = message.cardsV2[0].card.sections as { header?: string; collapsible?: boolean }[];
    expect(sections.map((s) => s.header)).toEqual([undefined, "Rows", "Show SQL", undefined]);
    expect(sections[2].collapsible).toBe(true);
    const json = JSON.stringify(message);
    expect(json).toContain("SELECT a &lt; b");
    expect(json).toContain('"openLink":{"url":"https://q.example/t/t1"}');
  });

  it("shows the chart by its URL when there is one", () => {
    const message = answerMessage({
      answer: "a",
      sql: [],
      threadUrl: "u",
      chartUrl: "https://api.example/c.png",
    });
    expect(message.cardsV2[0].card.sections[1]).toEqual({
      widgets: [{ image: { imageUrl: "https://api.example/c.png", altText: "Chart of the answer" } }],
    });
  });
});

describe("Google Chat settings", () => {
  it("a deploy with either chat app mounts the link key; Slack's secrets only with Slack", () => {
    const names = (env: Record<string, string>) => functionSecrets(env).map((p) => p.name);
    expect(names({ QUARRY_GOOGLE_CHAT: "true" })).toEqual(["QUARRY_CHAT_LINK_KEY"]);
    expect(names({ QUARRY_SLACK: "true" })).toEqual([
      "QUARRY_SLACK_BOT_TOKEN",
      "QUARRY_SLACK_SIGNING_SECRET",
      "QUARRY_CHAT_LINK_KEY",
    ]);
    expect(names({ QUARRY_SLACK: "true", FUNCTIONS_EMULATOR: "true" })).toEqual([]);
  });

  it("needs the audience and the link key; the certificates follow the kind of audience", () => {
    expect(readChatConfig({ QUARRY_GOOGLE_CHAT: "true" }).google.problem).toMatch(
      /QUARRY_GOOGLE_CHAT_AUDIENCE.*QUARRY_CHAT_LINK_KEY/,
    );
    const key = { QUARRY_CHAT_LINK_KEY: "k".repeat(32) };
    const byNumber = readChatConfig({
      ...key,
      QUARRY_GOOGLE_CHAT: "true",
      QUARRY_GOOGLE_CHAT_AUDIENCE: "1234",
    });
    expect(byNumber.google.problem).toBeUndefined();
    expect(byNumber.google.certsUrl).toMatch(/x509\/chat@system\.gserviceaccount\.com$/);
    const byUrl = readChatConfig({ ...key, QUARRY_GOOGLE_CHAT_AUDIENCE: "https://api.example/chat/events" });
    expect(byUrl.google.certsUrl).toBe("https://www.googleapis.com/oauth2/v1/certs");
  });
});

describe("which Google Chat events are questions", () => {
  const event = (over: Record<string, unknown> = {}) => ({
    type: "MESSAGE",
    space: { name: "spaces/S1", spaceType: "SPACE" },
    user: { name: "users/1", type: "HUMAN" },
    message: {
      name: "spaces/S1/messages/M1",
      text: "@Quarry top channels?",
      argumentText: " top channels?",
      thread: { name: "spaces/S1/threads/T1" },
    },
    ...over,
  });

  it("a person's message, the app's mention left out, in its thread", () => {
    expect(questionOf(event())).toEqual({
      message: "spaces/S1/messages/M1",
      space: "spaces/S1",
      direct: false,
      thread: "spaces/S1/threads/T1",
      user: "users/1",
      text: "top channels?",
    });
    expect(questionOf(event({ space: { name: "spaces/S1", spaceType: "DIRECT_MESSAGE" } }))).toMatchObject({
      direct: true,
    });
  });

  it("not: other event types (added, removed), a bot, an empty message, missing names", () => {
    expect(questionOf(event({ type: "REMOVED_FROM_SPACE" }))).toBe("event type REMOVED_FROM_SPACE");
    expect(questionOf(event({ user: { name: "users/2", type: "BOT" } }))).toBe("a bot's message");
    expect(questionOf(event({ message: { name: "m", argumentText: " ", thread: { name: "t" } } }))).toBe(
      "an empty message",
    );
    expect(questionOf(event({ space: {} }))).toBe("an event without its names");
  });
});
