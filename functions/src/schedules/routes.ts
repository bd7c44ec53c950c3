/**
 * The schedules API (docs/schedules.md): a member saves a question with its SQL, a cadence, an
 * optional alert and webhook (`POST /schedules`), lists, reads, changes, pauses, deletes and runs
 * their own; someone else's schedule answers 404, like a thread. Admins list every schedule and
 * pause or resume any (`/admin/schedules`). The SQL must pass the warehouse's dry run as its owner
 * now, so a schedule never keeps SQL its owner could not run.
 */
import { Router, type Request, type Response } from "express";
import { z } from "zod";
import { requireAdmin } from "../access/gate";
import { config } from "../config";
import { QuarryError } from "../errors";
import { personScope } from "../identity";
import { minIntervalMessage, minIntervalOk, toCron, type Schedule } from "./cadence";
import { enqueueScheduledRun } from "./queue";
import { scheduleBodies } from "./schema";
import { scheduleView, type ScheduleChanges } from "./doc";
import { scheduleStore } from "./store";
import { auditAction } from "../access/admin-audit";
import { runCallerOf } from "../access/caller";
import { graphFactory, threadStore } from "../runs/runtime";
import { parse } from "../runs/schemas";
import type { RoomDelivery } from "../runs/room-delivery";

const ScheduleIdParam = z.uuid({ message: "the schedule id must be a UUID, as POST /schedules answered it" });
const AdminPatchBody = z.strictObject({ paused: z.boolean({ message: "paused must be true or false" }) });
/** Most schedules the admin list answers with. */
const ADMIN_LIST_LIMIT = 500;

/**
 * The routes; `rooms` is how a chat room is checked when a schedule names one (app.ts gives the
 * chat channel's; without it, a room is refused).
 */
export function scheduleRoutes(rooms?: RoomDelivery): Router {
  const r = Router();
  r.post("/schedules", (req, res) => createSchedule(req, res, rooms));
  r.get("/schedules", listSchedules);
  r.get("/schedules/:id", getSchedule);
  r.patch("/schedules/:id", (req, res) => patchSchedule(req, res, rooms));
  r.delete("/schedules/:id", deleteSchedule);
  r.post("/schedules/:id/run", runNow);
  r.get("/admin/schedules", requireAdmin, listAll);
  r.patch("/admin/schedules/:id", requireAdmin, adminPatch);
  return r;
}

function bodies() {
  return scheduleBodies({ allowLoopbackWebhook: config().schedules.loopbackWebhook });
}

function checkInterval(schedule: Schedule): void {
  if (!minIntervalOk(schedule))
    throw new QuarryError("bad_request:body", `Invalid body: ${minIntervalMessage()}`);
}

/** 400 `bad_request:schedule` unless `sql` passes the warehouse's dry run as the caller, in their scope. */
async function checkSql(req: Request, sql: string, threadId: string): Promise<void> {
  const caller = runCallerOf(req);
  const [factory, scope] = await Promise.all([graphFactory(), personScope(caller.uid, caller.access.scope)]);
  if (!factory.dryRun) return;
  try {
    await factory.dryRun(sql, {
      userId: caller.uid,
      userEmail: caller.email,
      threadId,
      runId: "schedule",
      bytesBilledSoFar: 0,
      scope,
    });
  } catch (err) {
    throw new QuarryError(
      "bad_request:schedule",
      `sql: the saved SQL does not run as you: ${(err as Error).message} Save the SQL of an answer you got.`,
    );
  }
}

/**
 * 400 `bad_request:schedule` unless the caller's answers may go to `room`: the chat app is on, their
 * chat account is linked, and they are in the room (an answer is theirs to share, in rooms they are
 * in). Fails closed: no way to check means no room.
 */
async function checkRoom(uid: string, room: string, rooms: RoomDelivery | undefined): Promise<void> {
  const problem = rooms
    ? await rooms.check(uid, room)
    : "chat rooms cannot be delivered to here: leave room out, or deliver through a webhook";
  if (problem) throw new QuarryError("bad_request:schedule", `room: ${problem}`);
}

async function nextRun(schedule: Schedule, after = new Date()): Promise<Date> {
  const { nextRunAt } = await import("./next-run.js");
  return nextRunAt(schedule, after);
}

async function createSchedule(req: Request, res: Response, rooms?: RoomDelivery): Promise<void> {
  const caller = runCallerOf(req);
  const body = parse(bodies().create, req.body ?? {}, "body");
  checkInterval(body.schedule);
  // The conversation it came from must be the caller's (404 otherwise, like every thread route).
  await (await threadStore()).get(body.threadId, caller.uid);
  await checkSql(req, body.sql, body.threadId);
  if (body.room) await checkRoom(caller.uid, body.room, rooms);
  const store = await scheduleStore();
  const email = req.caller?.email ?? null;
  const { id, doc } = await store.create(
    { uid: caller.uid, email, emailVerified: req.caller?.emailVerified === true },
    {
      name: body.name ?? body.question.slice(0, 100),
      question: body.question,
      sql: body.sql,
      threadId: body.threadId,
      schedule: body.schedule,
      cron: toCron(body.schedule),
      alert: body.alert ?? null,
      webhook: body.webhook ?? null,
      room: body.room ?? null,
      nextRunAt: await nextRun(body.schedule),
    },
    config().schedules.maxPerPerson,
  );
  res.status(201).json(scheduleView(id, doc));
}

async function listSchedules(req: Request, res: Response): Promise<void> {
  const { uid } = runCallerOf(req);
  const list = await (await scheduleStore()).list(uid);
  res.json({ schedules: list.map(({ id, doc }) => scheduleView(id, doc)) });
}

async function getSchedule(req: Request, res: Response): Promise<void> {
  const { uid } = runCallerOf(req);
  const id = parse(ScheduleIdParam, req.params.id, "path");
  res.json(scheduleView(id, await (await scheduleStore()).get(id, uid)));
}

async function patchSchedule(req: Request, res: Response, rooms?: RoomDelivery): Promise<void> {
  const { uid } = runCallerOf(req);
  const id = parse(ScheduleIdParam, req.params.id, "path");
  const body = parse(bodies().patch, req.body ?? {}, "body");
  const store = await scheduleStore();
  const current = await store.get(id, uid);
  const changes: ScheduleChanges = {};
  if (body.name !== undefined) changes.name = body.name;
  if (body.question !== undefined) changes.question = body.question;
  if (body.alert !== undefined) changes.alert = body.alert;
  if (body.webhook !== undefined) changes.webhook = body.webhook;
  // A room is checked when it changes (each post checks it again).
  if (body.room && body.room !== current.room) await checkRoom(uid, body.room, rooms);
  if (body.room !== undefined) changes.room = body.room;
  if (body.sql !== undefined) {
    await checkSql(req, body.sql, current.threadId);
    changes.sql = body.sql;
  }
  if (body.schedule) {
    checkInterval(body.schedule);
    Object.assign(changes, {
      schedule: body.schedule,
      cron: toCron(body.schedule),
      timeZone: body.schedule.timeZone,
      nextRunAt: await nextRun(body.schedule),
    });
  }
  if (body.paused !== undefined) {
    changes.paused = body.paused;
    // Resumed: the next run is the next one from now, not every run missed while paused.
    if (!body.paused) changes.nextRunAt ??= await nextRun(body.schedule ?? current.schedule);
  }
  res.json(scheduleView(id, await store.patch(id, uid, changes)));
}

async function deleteSchedule(req: Request, res: Response): Promise<void> {
  const { uid } = runCallerOf(req);
  const id = parse(ScheduleIdParam, req.params.id, "path");
  await (await scheduleStore()).delete(id, uid);
  res.status(204).end();
}

/** `POST /schedules/:id/run`: the owner runs it now (queued like a tick's run; 202). */
async function runNow(req: Request, res: Response): Promise<void> {
  const { uid } = runCallerOf(req);
  const id = parse(ScheduleIdParam, req.params.id, "path");
  const claim = await (await scheduleStore()).claimNow(id, uid);
  await enqueueScheduledRun({ scheduleId: id, claim });
  res.status(202).json({ id, queued: true });
}

async function listAll(_req: Request, res: Response): Promise<void> {
  const list = await (await scheduleStore()).listAll(ADMIN_LIST_LIMIT);
  // A webhook URL is its room's credential: admins see where it points, not the URL.
  const masked = (url: string | null) => (url ? `${new URL(url).origin}/…` : null);
  res.json({
    schedules: list.map(({ id, doc }) => ({ ...scheduleView(id, doc), webhook: masked(doc.webhook) })),
  });
}

async function adminPatch(req: Request, res: Response): Promise<void> {
  const id = parse(ScheduleIdParam, req.params.id, "path");
  const { paused } = parse(AdminPatchBody, req.body ?? {}, "body");
  const store = await scheduleStore();
  const current = await store.read(id);
  if (!current) throw new QuarryError("not_found:schedule", `Schedule ${id} not found.`);
  const changes: ScheduleChanges = paused
    ? { paused }
    : { paused, nextRunAt: await nextRun(current.schedule) };
  const doc = await store.patch(id, undefined, changes, paused ? "paused by an admin" : undefined);
  await auditAction(req, paused ? "schedule.pause" : "schedule.resume", id, { owner: current.owner });
  res.json(scheduleView(id, doc));
}
