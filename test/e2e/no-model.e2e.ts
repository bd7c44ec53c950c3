/**
 * A newcomer's first run without any model: its own stack (Firestore with the rules, functions,
 * auth and hosting emulators) started with every model setting cleared and an empty HOME (no
 * gcloud credentials). Through the functions emulator, a run stores the question and ends with an
 * in-band `model:not_configured` error that names what to set, and the official SDK, left with its
 * default retries, sends the run once; in Chromium the page shows the set-up card, not a chat.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client, overrideFetchImplementation } from "@langchain/langgraph-sdk";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Stack } from "../../scripts/stack.mjs";
import { signUp } from "../support/auth-emulator";
import { launchBrowser, screenshot } from "../support/browser";

let stack: Stack;
let home: string;
let browser: Browser | undefined;

beforeAll(async () => {
  home = mkdtempSync(path.join(tmpdir(), "quarry-nomodel-"));
  stack = await startStack({
    services: ["firestore", "functions", "auth", "hosting"],
    ports: "auto",
    rules: "firestore.rules",
    env: {
      HOME: home,
      GEMINI_API_KEY: "",
      GOOGLE_API_KEY: "",
      VERTEX_AI_EMULATOR_HOST: "",
      GOOGLE_APPLICATION_CREDENTIALS: "",
      QUARRY_OPENAI_BASE_URL: "",
      QUARRY_MODEL_PROVIDER: "",
      QUARRY_WAREHOUSE: "duckdb",
    },
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  rmSync(home, { recursive: true, force: true });
});

describe("no model configured", () => {
  it("/client-config says so, with the three ways to get a model", async () => {
    const cfg = (await (await fetch(`${stack.urls.api}/client-config`)).json()) as {
      model: { ready: boolean; error: string; setup: { provider: string; command: string }[] };
    };
    expect(cfg.model).toMatchObject({ ready: false, error: "model:not_configured" });
    expect(cfg.model.setup.map((o) => o.provider)).toEqual(["gemini", "openai", "vertex"]);
  });

  it("a run keeps the question and ends with an error event naming what to set; the SDK sends it once", async () => {
    const user = await signUp(stack.urls.auth!);
    // The SDK's default client, retries included: a 5xx would be sent again, an in-band error not.
    const client = new Client({
      apiUrl: stack.urls.api,
      defaultHeaders: { authorization: `Bearer ${user.idToken}` },
    });
    const runRequests: string[] = [];
    overrideFetchImplementation((input: RequestInfo | URL, init?: RequestInit) => {
      const url = String(input instanceof Request ? input.url : input);
      if (url.includes("/runs/stream")) runRequests.push(url);
      return fetch(input, init);
    });
    try {
      const thread = await client.threads.create();
      const events: { event: string; data: unknown }[] = [];
      for await (const ev of client.runs.stream(thread.thread_id, "quarry", {
        input: { messages: [{ type: "human", content: "What was revenue by month in 2025?" }] },
        streamMode: ["values", "custom"],
      }))
        events.push(ev as { event: string; data: unknown });
      const errors = events.filter((e) => e.event === "error");
      expect(errors).toHaveLength(1);
      expect(errors[0].data).toMatchObject({
        error: "model:not_configured",
        message: expect.stringMatching(
          /GEMINI_API_KEY.*QUARRY_OPENAI_BASE_URL.*gcloud auth application-default login/,
        ),
      });
      expect(runRequests).toHaveLength(1);
      const state = await client.threads.getState(thread.thread_id);
      expect((state.values as { messages: { content: unknown }[] }).messages.map((m) => m.content)).toEqual([
        "What was revenue by month in 2025?",
      ]);
      expect((await client.threads.get(thread.thread_id)).status).toBe("error");
    } finally {
      overrideFetchImplementation((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
    }
  });

  it("the page shows the set-up card with the three ways instead of a chat", async () => {
    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(stack.urls.web!);
    await page.getByRole("button", { name: "Continue as test user" }).click();
    const card = page.getByRole("alert").filter({ hasText: "Connect an AI model to start" });
    await card.waitFor();
    for (const command of [
      "GEMINI_API_KEY=<your key> npm start",
      "QUARRY_OPENAI_BASE_URL=http://127.0.0.1:11434/v1 QUARRY_MODEL=qwen2.5:7b npm start",
      "gcloud auth application-default login && QUARRY_VERTEX_PROJECT=<project> npm start",
    ]) {
      await expect(card.getByText(command, { exact: true }).count()).resolves.toBe(1);
    }
    await expect(card.innerText()).resolves.toMatch(/No AI model is configured/);
    // No chat that can only fail: there is no question box.
    await expect(page.getByLabel("Your question").count()).resolves.toBe(0);
    await screenshot(page, "no-model-setup-card");
  });
});
