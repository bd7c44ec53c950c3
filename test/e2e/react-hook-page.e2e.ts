/**
 * LangChain's own React hook against Quarry, in Chromium: a minimal page on `useStream` from
 * @langchain/react (test/support/react-hook-page/, bundled here with Vite into a temporary
 * directory and served from 127.0.0.1 by the test, never shipped) asks over the Agent Streaming
 * Protocol v2 through the whole local stack (`npm start`'s emulators, the Gemini API stand-in,
 * DuckDB sample data) as a member signed up on the Auth emulator. The answer shows, the question
 * shows once (the hook's optimistic copy and the server's echo are one message), the "rows" line
 * from Quarry's `result` event (custom channel) counts the rows the thread keeps for the query, and
 * the page's answer is the one Quarry's own API keeps (`GET /threads/:id/state`). A follow-up in
 * the same thread is held by the stand-in after a few tokens: the page shows it part-written while
 * the hook is loading, and whole once released.
 *
 * The page's origin (the test's server) is not the Hosting origin the API's CORS setting names:
 * the functions emulator lets any origin call (firebase-functions' emulator-only `enableCors`).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { build } from "vite";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ToolArtifact } from "../../functions/src/contract";
import { call } from "../support/api-client";
import { signUp, type TestUser } from "../support/auth-emulator";
import { launchBrowser, reportFailure, screenshot } from "../support/browser";
import { E2E_MEMBER_DOMAIN } from "../support/e2e-access";
import { HOLD_URL_ENV, holdClient } from "../support/hold-control";
import { stackEnv } from "../support/stack-env";

const PAGE_SOURCE = path.resolve(__dirname, "../support/react-hook-page");
const QUESTION = "How many orders were placed?";
const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
};

let api: string;
let member: TestUser;
let outDir: string | undefined;
let files: { url: string; server: Server } | undefined;
let browser: Browser | undefined;
let page: Page;

/** Bundles the page with Vite into a temporary directory. */
async function buildPage(): Promise<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "quarry-react-hook-page-"));
  await build({
    configFile: false,
    root: PAGE_SOURCE,
    base: "./",
    logLevel: "warn",
    build: {
      outDir: dir,
      emptyOutDir: true,
      chunkSizeWarningLimit: 4000,
      rolldownOptions: {
        // @langchain/react marks its modules "use client" (for React Server Components): moot here.
        onwarn(warning, warn) {
          if (warning.code !== "MODULE_LEVEL_DIRECTIVE") warn(warning);
        },
      },
    },
  });
  return dir;
}

/** Serves `dir`'s files (GET only, nothing outside it) on 127.0.0.1, on a port the OS picks. */
async function serveDirectory(dir: string): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const rel = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname).slice(1) || "index.html";
    const file = path.resolve(dir, rel);
    if (req.method !== "GET" || !file.startsWith(dir + path.sep)) {
      res.writeHead(404).end();
      return;
    }
    readFile(file).then(
      (body) => {
        res.writeHead(200, { "content-type": TYPES[path.extname(file)] ?? "application/octet-stream" });
        res.end(body);
      },
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

beforeAll(async () => {
  const { urls } = stackEnv();
  api = urls.api!;
  member = await signUp(urls.auth!, `hook-${Date.now()}@${E2E_MEMBER_DOMAIN}`, {
    password: "hook-page-pw",
  });
  outDir = await buildPage();
  files = await serveDirectory(outDir);
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1000, height: 800 } });
  page = await context.newPage();
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") console.log(`[page ${m.type()}] ${m.text()}`);
  });
  page.on("pageerror", (e) => console.log(`[page error] ${e.message}`));
  // The ID token goes in the hash: the browser never sends it to the page's server.
  const hash = new URLSearchParams({ api, token: member.idToken });
  await page.goto(`${files.url}/#${hash}`);
});

afterEach((ctx) => reportFailure(page, ctx.task));

afterAll(async () => {
  await browser?.close();
  const server = files?.server;
  if (server) await new Promise((resolve) => server.close(resolve));
  if (outDir) rmSync(outDir, { recursive: true, force: true });
});

interface StateMessage {
  type: string;
  content: unknown;
  artifact?: unknown;
}

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((b: { text?: string }) => b.text ?? "").join("")
      : "";

/** The thread as Quarry's own API reports it: the questions, the last answer, the queries' rows. */
async function threadState(threadId: string) {
  const state = await call(api, `/threads/${threadId}/state`, { token: member.idToken });
  expect(state.status).toBe(200);
  const messages = (state.json.values as { messages: StateMessage[] }).messages;
  return {
    questions: messages.filter((m) => m.type === "human").map((m) => textOf(m.content)),
    answer: textOf(messages.filter((m) => m.type === "ai").at(-1)?.content),
    results: messages.flatMap((m) => {
      const artifact = m.artifact as ToolArtifact | undefined;
      return m.type === "tool" && artifact?.kind === "query" ? [artifact.result] : [];
    }),
  };
}

async function ask(question: string) {
  await page.getByLabel("Question").fill(question);
  await page.getByRole("button", { name: "Send" }).click();
}

/** What the page shows for its `n`-th question (1-based): the answer's text so far, the error if any. */
async function turn(n: number) {
  return page.evaluate((n) => {
    const items = [...document.querySelectorAll('ol[aria-label="Messages"] li')];
    const asked = items.flatMap((li, i) => (li.getAttribute("data-type") === "human" ? [i] : []));
    const after = items.slice(asked[n - 1] ?? items.length, asked[n] ?? items.length);
    return {
      answer: after.filter((li) => li.getAttribute("data-type") === "ai").at(-1)?.textContent ?? "",
      error: document.querySelector('[role="alert"]')?.textContent ?? null,
    };
  }, n);
}

/** Waits until the `n`-th question has an answer and the hook is idle again (or shows an error). */
async function answered(n: number) {
  await page.waitForFunction(
    (n) => {
      const items = [...document.querySelectorAll('ol[aria-label="Messages"] li')];
      const asked = items.flatMap((li, i) => (li.getAttribute("data-type") === "human" ? [i] : []));
      const answer = items
        .slice((asked[n - 1] ?? items.length) + 1)
        .find((li) => li.getAttribute("data-type") === "ai");
      const idle = document.querySelector("main")?.getAttribute("data-loading") === "false";
      return (
        !!document.querySelector('[role="alert"]') || (asked.length >= n && idle && !!answer?.textContent)
      );
    },
    n,
    { timeout: 60_000 },
  );
}

describe("a page on @langchain/react's useStream", () => {
  it("asks over the v2 protocol: the answer Quarry keeps, the question once, the result's rows", async () => {
    await ask(QUESTION);
    await answered(1);
    expect((await turn(1)).error).toBeNull();
    const threadId = await page.locator("main").getAttribute("data-thread-id");
    expect(threadId).toMatch(/^[0-9a-f-]{36}$/);
    const kept = await threadState(threadId!);
    expect(kept.questions).toEqual([QUESTION]);
    expect(kept.answer).not.toBe("");

    // The question shows once (the hook's optimistic copy and the server's echo are one message).
    await expect(page.locator('li[data-type="human"]').allTextContents()).resolves.toEqual([QUESTION]);
    // The rows line counts the rows of the query's result as the thread keeps it.
    expect(kept.results).toHaveLength(1);
    await expect(page.getByLabel("Result").textContent()).resolves.toBe(
      `rows: ${kept.results[0].rows.length}`,
    );
    // The page's answer is the one the thread keeps (its last tokens may render just after the
    // hook turns idle).
    await expect.poll(async () => (await turn(1)).answer).toBe(kept.answer);
    await screenshot(page, "react-hook-page-answered");
    expect((await turn(1)).error).toBeNull();
  });

  it("a follow-up in the same thread streams: part-written while loading, whole when done", async () => {
    const threadId = await page.locator("main").getAttribute("data-thread-id");
    // The stand-in answers "in detail" at length, and holds the answer after a few tokens until
    // this test lets it go: whatever the machine's speed, the page is looked at midway.
    const holds = holdClient(stackEnv().env[HOLD_URL_ENV]);
    const pause = holds.newKey("hook-page");
    const followUp = `${QUESTION.replace("?", ", in detail?")} [pause:${pause}]`;
    await ask(followUp);
    await page.waitForFunction(
      () => {
        const items = [...document.querySelectorAll('ol[aria-label="Messages"] li')];
        const last = items.at(-1);
        const humans = items.filter((li) => li.getAttribute("data-type") === "human").length;
        const loading = document.querySelector("main")?.getAttribute("data-loading") === "true";
        return humans === 2 && loading && last?.getAttribute("data-type") === "ai" && !!last.textContent;
      },
      undefined,
      { timeout: 60_000 },
    );
    const midway = (await turn(2)).answer;
    await screenshot(page, "react-hook-page-streaming");
    await holds.release(pause);
    await answered(2);
    expect((await turn(2)).error).toBeNull();
    expect(await page.locator("main").getAttribute("data-thread-id")).toBe(threadId);

    const kept = await threadState(threadId!);
    expect(kept.questions).toEqual([QUESTION, followUp]);
    await expect(page.locator('li[data-type="human"]').allTextContents()).resolves.toEqual(kept.questions);
    // The rows line counts the latest result's rows.
    expect(kept.results).toHaveLength(2);
    await expect(page.getByLabel("Result").textContent()).resolves.toBe(
      `rows: ${kept.results[1].rows.length}`,
    );
    await expect.poll(async () => (await turn(2)).answer).toBe(kept.answer);
    // Midway the page showed the start of that answer, not all of it.
    expect(midway.length).toBeLessThan(kept.answer.length);
    expect(kept.answer.startsWith(midway)).toBe(true);
  });
});
