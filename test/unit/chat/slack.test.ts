import { describe, expect, it } from "vitest";
import { slackSignature, verifySlackRequest } from "../../../functions/src/chat/slack/verify";
import { classifySlackEvent } from "../../../functions/src/chat/slack/classify";
import {
  SLACK_TABLE_ROWS,
  answerBlocks,
  rowsLine,
  sqlBlocks,
} from "../../../functions/src/chat/slack/blocks";
import { trustLine } from "../../../functions/src/chat/trust";
import { signLinkToken, verifyLinkToken } from "../../../functions/src/chat/link-token";
import { readChatConfig } from "../../../functions/src/config/chat";

const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const NOW = 1_700_000_000_000;
const body = Buffer.from('{"type":"event_callback","event_id":"Ev1"}');
const ts = String(NOW / 1000);

describe("Slack request signing", () => {
  it("accepts Slack's own signature (the documented example)", () => {
    // https://docs.slack.dev/authentication/verifying-requests-from-slack: this body, secret and timestamp.
    const example =
      "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
    expect(slackSignature(SECRET, "1531420618", example)).toBe(
      "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503",
    );
  });

  it("passes a fresh, correctly signed request", () => {
    const signature = slackSignature(SECRET, ts, body);
    expect(() => verifySlackRequest(SECRET, { signature, timestamp: ts }, body, NOW)).not.toThrow();
  });

  it("refuses a wrong signature, a changed body, an old or future timestamp, missing headers", () => {
    const signature = slackSignature(SECRET, ts, body);
    const refused = (f: () => void) =>
      expect(f).toThrow(expect.objectContaining({ code: "unauthorized:chat_signature" }));
    refused(() => verifySlackRequest("other-secret", { signature, timestamp: ts }, body, NOW));
    refused(() => verifySlackRequest(SECRET, { signature, timestamp: ts }, Buffer.from(`${body} `), NOW));
    refused(() => verifySlackRequest(SECRET, { signature: `${signature}0`, timestamp: ts }, body, NOW));
    const old = String(NOW / 1000 - 6 * 60);
    refused(() =>
      verifySlackRequest(SECRET, { signature: slackSignature(SECRET, old, body), timestamp: old }, body, NOW),
    );
    const future = String(NOW / 1000 + 6 * 60);
    refused(() =>
      verifySlackRequest(
        SECRET,
        { signature: slackSignature(SECRET, future, body), timestamp: future },
        body,
        NOW,
      ),
    );
    refused(() => verifySlackRequest(SECRET, { timestamp: ts }, body, NOW));
    refused(() => verifySlackRequest(SECRET, { signature, timestamp: ts }, undefined, NOW));
    expect(() =>
      verifySlackRequest(SECRET, { signature, timestamp: String(NOW / 1000 - 4 * 60) }, body, NOW),
    ).toThrow(/does not match/);
  });
});

const callback = (event: Record<string, unknown>) => ({
  type: "event_callback",
  event_id: "Ev0001",
  team_id: "T1",
  authorizations: [{ user_id: "UBOT", is_bot: true }],
  event: {
    type: "message",
    channel_type: "im",
    channel: "D1",
    user: "U1",
    text: "How many orders?",
    ts: "1.000100",
    ...event,
  },
});

describe("which Slack events are questions", () => {
  it("a direct message, and an @mention with the mention dropped, in the thread it belongs to", () => {
    expect(classifySlackEvent(callback({}))).toEqual({
      question: {
        eventId: "Ev0001",
        team: "T1",
        channel: "D1",
        channelType: "im",
        user: "U1",
        text: "How many orders?",
        ts: "1.000100",
        threadTs: "1.000100",
      },
    });
    const mention = classifySlackEvent(
      callback({
        type: "app_mention",
        channel_type: undefined,
        channel: "C1",
        text: "<@UBOT> top customers?",
        thread_ts: "0.5",
      }),
    );
    expect(mention).toMatchObject({
      question: { text: "top customers?", channelType: "channel", threadTs: "0.5" },
    });
  });

  it("ignores bots, the app itself, edits, other subtypes, channel chatter, unknown types and empty text", () => {
    const why = (event: Record<string, unknown>) =>
      (classifySlackEvent(callback(event)) as { ignored?: string }).ignored;
    expect(why({ bot_id: "B1" })).toBe("a bot's message");
    expect(why({ user: "UBOT" })).toBe("the app's own message");
    expect(why({ subtype: "message_changed" })).toBe("an edit");
    expect(why({ subtype: "channel_join" })).toMatch(/subtype channel_join/);
    expect(why({ channel_type: "channel" })).toMatch(/without a mention/);
    expect(why({ type: "reaction_added" })).toMatch(/event type reaction_added/);
    expect(why({ text: "<@UBOT>" })).toBe("an empty message");
    expect(why({ channel: undefined })).toMatch(/without its ids/);
  });
});

describe("an answer as Slack blocks", () => {
  const columns = [
    { name: "channel", type: "STRING" },
    { name: "orders", type: "INT64" },
  ];
  const rows = Array.from({ length: 25 }, (_, i) => ({ channel: `c${i}`, orders: i }));

  it("the answer, the first rows as a table with how many there were, and the buttons", () => {
    const blocks = answerBlocks({
      answer: "**25** channels.",
      result: { columns, rows, totalRows: 40 },
      threadUrl: "https://q.example/t/abc",
      answerId: "a1",
      hasSql: true,
    });
    expect(blocks[0]).toEqual({ type: "markdown", text: "**25** channels." });
    const table = blocks[1] as { type: string; rows: { text: string }[][] };
    expect(table.type).toBe("table");
    expect(table.rows).toHaveLength(SLACK_TABLE_ROWS + 1);
    expect(table.rows[0].map((c) => c.text)).toEqual(["channel", "orders"]);
    expect(table.rows[3].map((c) => c.text)).toEqual(["c2", "2"]);
    expect(JSON.stringify(blocks[2])).toContain(`${SLACK_TABLE_ROWS} of 40 rows`);
    const actions = blocks.at(-1) as { elements: { action_id: string; url?: string; value?: string }[] };
    expect(actions.elements.map((e) => e.action_id)).toEqual([
      "quarry_open",
      "quarry_sql",
      "quarry_up",
      "quarry_down",
    ]);
    expect(actions.elements[0].url).toBe("https://q.example/t/abc");
    expect(actions.elements.slice(1).every((e) => e.value === "a1")).toBe(true);
  });

  it("no Show SQL without SQL; rows lines; SQL in code blocks", () => {
    const blocks = answerBlocks({ answer: "", threadUrl: "u", answerId: "a", hasSql: false });
    expect(JSON.stringify(blocks)).not.toContain("quarry_sql");
    expect(blocks[0]).toEqual({ type: "markdown", text: "I have no written answer for this." });
    expect(rowsLine(1, 1, false)).toBe("1 row");
    expect(rowsLine(3, 3, false)).toBe("3 rows");
    expect(rowsLine(10, 500, true)).toBe("10 of more than 500 rows");
    expect(JSON.stringify(sqlBlocks(["SELECT 1"]))).toContain("```SELECT 1```");
    expect(JSON.stringify(sqlBlocks([]))).toContain("ran no SQL");
  });
});

describe("how an answer was computed", () => {
  const facts = { definitions: [], tables: ["shop.orders"], filters: [], caveats: [], sql: ["SELECT 1"] };
  it("says verified and by what, or written for this question, with the tables", () => {
    expect(
      trustLine({
        ...facts,
        verification: { status: "verified", by: "verified_query", names: ["Orders by channel"] },
      }),
    ).toBe("✅ *Verified*: the team's verified query (Orders by channel) · tables: shop.orders");
    expect(
      trustLine({ ...facts, verification: { status: "written" }, caveats: ["Cancelled orders left out"] }),
    ).toBe(
      "✍️ *Written for this question*: the data team has not checked this SQL · tables: shop.orders · Cancelled orders left out",
    );
  });
});

describe("connect links", () => {
  const KEY = "k".repeat(40);
  it("a link names its chat user until it expires; a changed, foreign or expired one is refused", () => {
    const token = signLinkToken(KEY, "slack:T1:U1", NOW + 60_000);
    expect(verifyLinkToken(KEY, token, NOW)).toBe("slack:T1:U1");
    const refused = (t: string, now = NOW, key = KEY) =>
      expect(() => verifyLinkToken(key, t, now)).toThrow(
        expect.objectContaining({ code: "bad_request:chat_link" }),
      );
    refused(token, NOW + 61_000);
    refused(token, NOW, "x".repeat(40));
    const [payload, mac] = token.split(".");
    const other = Buffer.from(JSON.stringify({ u: "slack:T1:U2", e: NOW + 60_000 })).toString("base64url");
    refused(`${other}.${mac}`);
    refused(payload);
    refused(`${token}.x`);
  });
});

describe("chat settings", () => {
  it("off by default; on without its secrets, the problem names each missing setting", () => {
    expect(readChatConfig({}).problem).toBeUndefined();
    const problem = readChatConfig({ QUARRY_SLACK: "true", QUARRY_CHAT_LINK_KEY: "short" }).problem!;
    expect(problem).toMatch(/QUARRY_SLACK_SIGNING_SECRET/);
    expect(problem).toMatch(/QUARRY_SLACK_BOT_TOKEN/);
    expect(problem).toMatch(/QUARRY_CHAT_LINK_KEY \(32 characters or more\)/);
    const ok = readChatConfig({
      QUARRY_SLACK: "true",
      QUARRY_SLACK_SIGNING_SECRET: "s",
      QUARRY_SLACK_BOT_TOKEN: "xoxb-1",
      QUARRY_CHAT_LINK_KEY: "k".repeat(32),
    });
    expect(ok.problem).toBeUndefined();
    expect(ok.slack.apiUrl).toBe("https://slack.com/api/");
  });
});
