/**
 * The schedules tests' fixture (test/integration/api/schedules-*.int.ts): the function's app from
 * source in the test's process, configured for schedules (a limit of 3, loopback webhooks, mail,
 * the finance dataset beside the sample's `shop`), an admin and two members, a loopback chat-webhook
 * receiver, and helpers that create schedules and run one as the tick and the task queue would.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "vitest";
import { Firestore, Timestamp } from "@google-cloud/firestore";
import { signUp, type TestUser } from "./auth-emulator";
import { call, sdkClient } from "./api-client";
import { FINANCE_SALARIES_CSV } from "./finance";
import { HOLD_URL_ENV, holdClient, type Holds } from "./hold-control";
import { startInProcessApp } from "./in-process-app";
import { stackEnv } from "./stack-env";

export const MAIL = "mail-schedules-test";
export const SQL = "SELECT count(*) AS n_orders FROM shop.orders";
export const DAILY = { kind: "daily", time: "09:00", timeZone: "Europe/Berlin" };

interface Receiver {
  url: string;
  got: { text: string; keys: string[] }[];
  status: number;
  close(): Promise<void>;
}

/** A chat webhook stand-in on 127.0.0.1: records every message, answers `status`. */
async function startReceiver(): Promise<Receiver> {
  const r: Partial<Receiver> = { got: [], status: 200 };
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      const json = JSON.parse(body) as Record<string, string>;
      r.got!.push({ text: json.text, keys: Object.keys(json) });
      res.writeHead(r.status!).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  r.close = () => new Promise((resolve) => server.close(() => resolve()));
  return r as Receiver;
}

export interface ScheduleFixture {
  api: string;
  db: Firestore;
  holds: Holds;
  ann: TestUser;
  bob: TestUser;
  admin: TestUser;
  receiver: Receiver;
  close(): Promise<void>;
}

/** Starts the fixture (once per test file, in its beforeAll); `env` over its settings. */
export async function startScheduleFixture(env: Record<string, string> = {}): Promise<ScheduleFixture> {
  const stack = stackEnv();
  // This process's function configuration (read once, on first use).
  Object.assign(process.env, {
    QUARRY_MAX_SCHEDULES: "3",
    QUARRY_SCHEDULE_LOOPBACK_WEBHOOK: "true",
    QUARRY_MAIL_COLLECTION: MAIL,
    QUARRY_APP_URL: "https://quarry.example.test",
    // A second dataset beside the sample's `shop`, as the emulated function has, for the scope test.
    QUARRY_DUCKDB_FILES: `finance.salaries=${FINANCE_SALARIES_CSV}`,
  });
  const app = await startInProcessApp(env);
  const db = new Firestore({
    projectId: stack.env.GCLOUD_PROJECT,
    host: stack.env.FIRESTORE_EMULATOR_HOST,
    ssl: false,
  });
  const [ann, bob, admin] = await Promise.all([1, 2, 3].map(() => signUp(stack.urls.auth!)));
  const now = new Date().toISOString();
  await db
    .collection("members")
    .doc(admin.email)
    .set({ email: admin.email, role: "admin", addedBy: "test", addedAt: now, updatedAt: now });
  const receiver = await startReceiver();
  current = { api: app.url, db, holds: holdClient(stack.env[HOLD_URL_ENV]), ann, bob, admin, receiver };
  return {
    ...current,
    close: async () => {
      await receiver.close();
      await app.close();
      await db.terminate();
    },
  };
}

let current: Omit<ScheduleFixture, "close"> | undefined;

function fixture(): Omit<ScheduleFixture, "close"> {
  if (!current) throw new Error("startScheduleFixture() first (in beforeAll)");
  return current;
}

export async function newThread(u: TestUser): Promise<string> {
  return (await sdkClient(fixture().api, u).threads.create()).thread_id;
}

/** `POST /schedules` as `u`, on a new conversation of theirs, with `over` replacing fields. */
export async function create(u: TestUser, over: Record<string, unknown> = {}) {
  const body = {
    threadId: await newThread(u),
    question: "How many orders?",
    sql: SQL,
    schedule: DAILY,
    ...over,
  };
  return call(fixture().api, "/schedules", { method: "POST", token: u.idToken, body });
}

/** The ids of `u`'s schedules (`GET /schedules`). */
export async function mine(u: TestUser): Promise<string[]> {
  const res = await call(fixture().api, "/schedules", { token: u.idToken });
  return (res.json.schedules as { id: string }[]).map((s) => s.id);
}

export const schedules = () => fixture().db.collection("schedules");

/** Makes a schedule due, ticks (queue collected here), and runs its task as the task-queue function would. */
export async function runOnce(id: string) {
  const { runScheduleTick } = await import("../../functions/src/schedules/tick");
  const { runScheduled } = await import("../../functions/src/schedules/run");
  await schedules()
    .doc(id)
    .update({ nextRunAt: Timestamp.fromMillis(Date.now() - 60_000) });
  const tasks: { scheduleId: string; claim: string }[] = [];
  await runScheduleTick({ enqueue: async (t) => void tasks.push(t) });
  const task = tasks.find((t) => t.scheduleId === id);
  expect(task, "the tick claimed the schedule").toBeDefined();
  return runScheduled(task!);
}
