/**
 * The admin page's audit log against the shared contract: a failed or refused query's entry shows
 * its error as category and words (it once rendered the error object and blanked the whole admin
 * page), and the server's audit page is, by type, what the page reads.
 */
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { AuditAnswer, AuditEntry, Member } from "../../functions/src/contract";
import type { AuditPage } from "../../functions/src/access/audit";
import type { MemberDoc } from "../../functions/src/access/members";
import { AuditRow } from "../../web/src/admin/Audit";
import { PartBoundary } from "../../web/src/PartBoundary";

const at = "2026-11-25T10:00:00.000Z";
const failed: AuditEntry = {
  kind: "query",
  at,
  uid: "u1",
  email: "ann@example.com",
  threadId: "t1",
  runId: "r1",
  sql: "SELECT nme FROM shop.customers",
  outcome: "error",
  bytesBilled: 0,
  durationMs: 12,
  error: { category: "invalid_query", message: 'Referenced column "nme" not found' },
};
const refused: AuditEntry = {
  ...failed,
  sql: "DELETE FROM shop.orders",
  outcome: "refused",
  error: { category: "refused", message: "Only read-only SELECT queries are allowed" },
};

const html = (entry: AuditEntry) => renderToStaticMarkup(createElement(AuditRow, { entry }));

describe("the audit log's rows", () => {
  it("shows a failed and a refused query's error as its category and message", () => {
    const a = html(failed);
    expect(a).toContain("invalid query</strong>: Referenced column &quot;nme&quot; not found");
    expect(a).toContain("ann@example.com");
    expect(a).toContain("SELECT nme FROM shop.customers");
    expect(html(refused)).toContain("refused</strong>: Only read-only SELECT queries are allowed");
  });

  it("shows an admin action with who did it and to whom", () => {
    const row = html({
      kind: "admin",
      at,
      uid: "u9",
      email: null,
      action: "member.add",
      target: "bob@example.com",
    });
    expect(row).toContain("<strong>u9</strong> member.add bob@example.com");
  });

  it("a part that throws while rendering shows 'could not be shown' with the error; its siblings stay", async () => {
    const { JSDOM } = await import("jsdom");
    const { createRoot } = await import("react-dom/client");
    const { act } = await import("react");
    const dom = new JSDOM("<!doctype html><div id=root></div>");
    const g = globalThis as Record<string, unknown>;
    const saved = { window: g.window, document: g.document, act: g.IS_REACT_ACT_ENVIRONMENT };
    Object.assign(g, { window: dom.window, document: dom.window.document, IS_REACT_ACT_ENVIRONMENT: true });
    const quiet = console.error;
    console.error = () => {}; // React reports the caught error; the fallback is what is under test
    try {
      const Broken = (): never => {
        throw new Error(
          "Objects are not valid as a React child (found: object with keys {category, message})",
        );
      };
      const root = createRoot(dom.window.document.getElementById("root")!);
      await act(async () =>
        root.render(
          createElement(
            "main",
            null,
            createElement(PartBoundary, {
              label: "Members",
              children: createElement("p", null, "members here"),
            }),
            createElement(PartBoundary, { label: "Audit log", children: createElement(Broken) }),
          ),
        ),
      );
      const text = dom.window.document.body.textContent ?? "";
      expect(text).toContain("members here");
      expect(text).toContain(
        "This part could not be shown (Audit log): Objects are not valid as a React child",
      );
      expect(dom.window.document.querySelector('[role="alert"]')?.getAttribute("aria-label")).toBe(
        "Audit log could not be shown",
      );
      await act(async () => root.unmount());
    } finally {
      console.error = quiet;
      Object.assign(g, {
        window: saved.window,
        document: saved.document,
        IS_REACT_ACT_ENVIRONMENT: saved.act,
      });
    }
  });
});

describe("the admin API's shapes are the contract's", () => {
  it("the server's audit page and member documents are what the page reads (checked by the typecheck)", () => {
    expectTypeOf<AuditPage>().toExtend<AuditAnswer>();
    // A stored entry may lack `groups` (in none); the API always lists them (`[]`).
    expectTypeOf<MemberDoc>().toExtend<Omit<Member, "groups">>();
    expectTypeOf<NonNullable<MemberDoc["groups"]>>().toEqualTypeOf<Member["groups"]>();
    // The bug that blanked the page: an error is an object, never text to render as is.
    expectTypeOf<Extract<AuditEntry, { kind: "query" }>["error"]>().not.toExtend<string | undefined>();
  });
});
