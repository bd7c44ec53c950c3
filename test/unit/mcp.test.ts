/**
 * The pure parts of Quarry's MCP server and tokens: the "N of M rows" preview and the text block,
 * the token format, hashing and its 401, the cancellation's keys; and `run_sql` over the real
 * warehouse tools — scope, the read-only check and a byte-cap refusal come back in words, and the
 * query context carries the person's bytes left and the MCP token (for the audit log).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConfig } from "../../functions/src/config";
import {
  closeWarehouses,
  createWarehouseTools,
  getWarehouse,
  WarehouseError,
} from "../../functions/src/tools/index";
import type { QueryContext, Warehouse } from "../../functions/src/tools/types";
import { FULL_SCOPE, limitedScope } from "../../functions/src/tools/scope";
import { compile, type TopLevelSpec } from "vega-lite";
import { askText, markdownTable, previewRows, rowsNote } from "../../functions/src/mcp/results";
import { runSql, type DataDeps } from "../../functions/src/mcp/data-tools";
import { callKey, cancelledIds } from "../../functions/src/mcp/cancel";
import { CollectingOutput } from "../../functions/src/runs/collect";
import {
  hashToken,
  isPersonalToken,
  matches,
  newToken,
  tokenId,
  tokenRefused,
} from "../../functions/src/access/tokens";

describe("MCP results", () => {
  it("says how many rows were shown of how many", () => {
    expect(rowsNote(3, 3)).toBe("3 rows");
    expect(rowsNote(1, 1)).toBe("1 row");
    expect(rowsNote(50, 1204)).toBe("50 of 1,204 rows");
    expect(rowsNote(50, 10_000, true)).toBe("50 of more than 10,000 rows");
  });

  it("cuts a result to a preview and draws it as a Markdown table", () => {
    const p = previewRows(
      {
        sql: "SELECT a, b FROM t",
        columns: [
          { name: "a", type: "INT64" },
          { name: "b", type: "STRING" },
        ],
        rows: [
          { a: 1, b: "x|y" },
          { a: 2, b: "line\nbreak" },
          { a: 3, b: null },
        ],
        totalRows: 3,
      },
      2,
    );
    expect(p).toMatchObject({ shown: 2, total: 3, total_at_least: false, note: "2 of 3 rows" });
    expect(markdownTable(p)).toBe(
      "| a | b |\n| --- | --- |\n| 1 | x\\|y |\n| 2 | line break |\n\n(2 of 3 rows)",
    );
  });

  it("carries the chart the page would draw: its Vega-Lite spec, compiled by Vega-Lite, or the reason", () => {
    const months = ["2025-01", "2025-02", "2025-03", "2025-04"];
    const p = previewRows(
      {
        sql: "SELECT month, revenue FROM t",
        columns: [
          { name: "month", type: "STRING" },
          { name: "revenue", type: "FLOAT64" },
        ],
        // Out of calendar order: the chart puts them back in order on a time axis.
        rows: [3, 1, 0, 2].map((i) => ({ month: months[i]!, revenue: 100 + i })),
        totalRows: 10,
      },
      4,
    );
    expect(p.chart).toMatchObject({ type: "line", options: ["line", "bar"] });
    expect(p.chart.reason).toContain("first 4 rows");
    const spec = p.chart.spec as unknown as TopLevelSpec & { encoding: { x: { sort: string[] } } };
    expect(spec.encoding.x.sort).toEqual(months);
    expect(() => compile(spec)).not.toThrow();

    const one = previewRows(
      { sql: "x", columns: [{ name: "n", type: "INT64" }], rows: [{ n: 3 }], totalRows: 1 },
      5,
    );
    expect(one.chart.spec).toBeUndefined();
    expect(one.chart.options).toEqual([]);
    expect(one.chart.reason).toBeTruthy();
  });

  it("ask's text has the answer, the SQL, the rows, the follow-ups and the thread", () => {
    const text = askText({
      thread_id: "t-1",
      status: "answered",
      answer: "There were 3 orders.",
      sql: ["SELECT COUNT(*) AS n FROM shop.orders"],
      result: previewRows(
        { sql: "x", columns: [{ name: "n", type: "INT64" }], rows: [{ n: 3 }], totalRows: 1 },
        5,
      ),
      follow_ups: ["By month?"],
    });
    expect(text).toContain("There were 3 orders.");
    expect(text).toContain("```sql\nSELECT COUNT(*) AS n FROM shop.orders\n```");
    expect(text).toContain("(1 row)");
    expect(text).toContain("- By month?");
    expect(text).toContain("thread_id: t-1");
    const asking = askText({
      thread_id: "t-2",
      status: "asking",
      answer: "Which?",
      sql: [],
      follow_ups: [],
      choices: ["A"],
    });
    expect(asking).toContain('thread_id: "t-2"');
    expect(asking).toContain("- A");
  });
});

describe("personal access tokens", () => {
  it("have a recognisable prefix, a public id and a secret only their hash checks", () => {
    const { id, token } = newToken();
    expect(token.startsWith(`qry_${id}_`)).toBe(true);
    expect(tokenId(token)).toBe(id);
    expect(isPersonalToken(token)).toBe(true);
    expect(isPersonalToken("eyJhbGciOi.x.y")).toBe(false);
    expect(tokenId("qry_short_x")).toBeUndefined();
    expect(matches({ hash: hashToken(token) }, token)).toBe(true);
    // One character changed (whatever the last one is).
    const other = token.endsWith("A") ? "B" : "A";
    expect(matches({ hash: hashToken(token) }, `${token.slice(0, -1)}${other}`)).toBe(false);
    expect(newToken().token).not.toBe(token);
  });

  it("are refused with a 401 that carries the Bearer challenge", () => {
    const err = tokenRefused("This token expired.");
    expect(err.status).toBe(401);
    expect(err.code).toBe("unauthorized:token");
    expect(err.headers["WWW-Authenticate"]).toMatch(/^Bearer realm="quarry", error="invalid_token"$/);
  });
});

describe("MCP cancellation", () => {
  it("finds the cancelled ids in a message or a batch", () => {
    const cancel = (requestId: unknown) => ({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId },
    });
    expect(cancelledIds(cancel(4))).toEqual([4]);
    expect(cancelledIds([cancel("a"), { jsonrpc: "2.0", id: 1, method: "tools/list" }, cancel({})])).toEqual([
      "a",
    ]);
    expect(cancelledIds(undefined)).toEqual([]);
    // One request cannot make thousands of look-ups: ids once each, at most the SDK's batch limit.
    expect(cancelledIds([cancel(7), cancel(7), cancel("7")])).toEqual([7, "7"]);
    expect(cancelledIds(Array.from({ length: 5000 }, (_, i) => cancel(i)))).toHaveLength(100);
  });

  it("answers with the refusal ingress writes for a question it will not run", () => {
    const out = new CollectingOutput(() => {});
    out.send("updates", { ingress: { finalAnswer: "" } });
    out.send("updates", { ingress: { finalAnswer: "I can only answer questions about your data." } });
    expect(out.answer).toBe("I can only answer questions about your data.");
    const answered = new CollectingOutput(() => {});
    answered.send("updates", { ingress: { finalAnswer: "" } });
    answered.send("updates", { generator: { finalAnswer: "There were 9 orders." } });
    expect(answered.answer).toBe("There were 9 orders.");
  });

  it("keys a call by person, credential and request id (1 and '1' differ)", () => {
    const via = { channel: "mcp" as const, tokenId: "0123456789abcdef" };
    expect(callKey("u", via, 1)).toBe(callKey("u", via, 1));
    expect(callKey("u", via, 1)).not.toBe(callKey("u", via, "1"));
    expect(callKey("u", via, 1)).not.toBe(callKey("u", { channel: "mcp" }, 1));
    expect(callKey("u", via, 1)).not.toBe(callKey("v", via, 1));
  });
});

describe("run_sql on the warehouse tools", () => {
  const cfg = readConfig({ GOOGLE_CLOUD_PROJECT: "demo-test" }).warehouse;
  let duck: Warehouse;
  beforeAll(async () => {
    duck = await getWarehouse(cfg);
  }, 120_000);
  afterAll(() => closeWarehouses());

  const deps = (warehouse: Warehouse, scope = FULL_SCOPE): DataDeps => ({
    tools: createWarehouseTools(warehouse),
    searchContext: () => Promise.reject(new Error("unused")),
    person: {
      uid: "u1",
      email: "u1@example.com",
      scope,
      bytesLeft: 1234,
      via: { channel: "mcp", tokenId: "t1" },
    },
  });

  it("answers rows with the notice; refuses a write and a table out of scope in words", async () => {
    const ok = await runSql(deps(duck), "SELECT product_id FROM shop.products ORDER BY product_id", 3);
    expect(ok.ok && ok.data.note).toMatch(/^3 of \d+ rows$/);
    const write = await runSql(deps(duck), "DELETE FROM shop.orders", 3);
    expect(write).toMatchObject({ ok: false });
    expect(write.text).toMatch(/^Error \(refused\): .*SELECT/);
    const outside = await runSql(deps(duck, limitedScope(["finance"])), "SELECT * FROM shop.orders", 3);
    expect(outside.ok).toBe(false);
    expect(outside.text).toMatch(/^Error \(\w+\): /);
    expect(outside.text).not.toMatch(/rows/);
  });

  it("passes the person's bytes left and the token down, and words a byte-cap refusal", async () => {
    const seen: QueryContext[] = [];
    // The engine with its query replaced: every other method still the engine's own, bound to it
    // (a spread would keep only its own fields, not its class's methods).
    const query: Warehouse["query"] = (_sql, ctx) => {
      seen.push(ctx);
      return Promise.reject(
        new WarehouseError(
          "bytes_limit",
          "The query would scan 5.0 GB; the per-query limit is 1.0 GB. Filter on the partition column.",
        ),
      );
    };
    const capped = new Proxy(duck, {
      get: (engine, name) => {
        if (name === "query") return query;
        const value: unknown = Reflect.get(engine, name);
        return typeof value === "function" ? value.bind(engine) : value;
      },
    });
    expect(typeof capped.describeTable).toBe("function");
    const r = await runSql(deps(capped), "SELECT * FROM shop.orders", 3);
    expect(r).toMatchObject({ ok: false, billed: 0 });
    expect(r.text).toBe(
      "Error (bytes_limit): The query would scan 5.0 GB; the per-query limit is 1.0 GB. Filter on the partition column.",
    );
    expect(seen[0]).toMatchObject({
      userId: "u1",
      personBytesLeft: 1234,
      via: { channel: "mcp", tokenId: "t1" },
    });
  });
});
