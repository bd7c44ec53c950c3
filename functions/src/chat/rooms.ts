/**
 * Rooms bound to a group: by default an answer in a shared room (a Slack channel, a Google Chat
 * space) is private to its asker, computed under their scope. An admin may bind a room to a group
 * (`PUT /admin/chat/rooms/:room` with `{ group }`); answers there then run under that group's
 * scope — the datasets the admin chose for that room's audience — and are posted for everyone.
 * Bindings live server-only in `chatRooms`; binding and unbinding are admin actions in the audit.
 */
import { createHash } from "node:crypto";
import { Router } from "express";
import { z } from "zod";
import { CHAT_ROOM, CHAT_ROOM_FORMAT, type ChatRoomBinding, type ChatRoomsAnswer } from "../contract/chat";
import { QuarryError } from "../errors";
import { firestore } from "../services";
import { accessStores, requireAdmin } from "../access/gate";
import { auditAction } from "../access/admin-audit";
import { callerOf } from "../access/caller";
import type { RunCaller } from "../runs/admission";
import { parse } from "../runs/schemas";
import { limitedScope } from "../tools/scope";

const ROOMS = "chatRooms";

const BindBody = z.strictObject({ group: z.string().trim().toLowerCase().min(1).max(100) });

const refOf = async (room: string) =>
  (await firestore()).collection(ROOMS).doc(createHash("sha256").update(room).digest("hex").slice(0, 40));

/** The group a room is bound to, if any. */
export async function roomGroup(room: string): Promise<string | undefined> {
  const snap = await (await refOf(room)).get();
  return snap.exists ? (snap.get("group") as string) : undefined;
}

/**
 * The caller as they ask in a room bound to `group`: the group's scope instead of their own (a
 * group deleted since is refused in words).
 */
export async function inBoundRoom(caller: RunCaller, group: string): Promise<RunCaller> {
  const { groups } = await accessStores();
  const found = (await groups.fresh()).find((g) => g.name === group);
  if (!found) {
    throw new QuarryError(
      "not_found:group",
      `This room is bound to the group ${group}, which no longer exists: ask an admin.`,
    );
  }
  return { ...caller, access: { ...caller.access, scope: limitedScope(found.datasets) } };
}

function roomParam(raw: string): string {
  if (!CHAT_ROOM.test(raw)) {
    throw new QuarryError("bad_request:params", `A room is ${CHAT_ROOM_FORMAT} (URL-encoded).`);
  }
  return raw;
}

/** `GET|PUT|DELETE /admin/chat/rooms[/:room]` (admins only), mounted at `/admin/chat`. */
export function roomRoutes(): Router {
  const r = Router();
  r.use(requireAdmin);
  r.get("/rooms", async (_req, res) => {
    const snap = await (await firestore()).collection(ROOMS).orderBy("room").limit(1000).get();
    const answer: ChatRoomsAnswer = {
      rooms: snap.docs.map((d) => ({ room: d.get("room") as string, group: d.get("group") as string })),
    };
    res.json(answer);
  });
  r.put("/rooms/:room", async (req, res) => {
    const room = roomParam(String(req.params.room));
    const { group } = parse(BindBody, req.body ?? {}, "body");
    const { groups } = await accessStores();
    if (!(await groups.get(group)))
      throw new QuarryError("not_found:group", `No group ${group}: create it first.`);
    await (
      await refOf(room)
    ).set({
      room,
      group,
      boundBy: callerOf(req).email ?? callerOf(req).uid,
      boundAt: new Date().toISOString(),
    });
    await auditAction(req, "chat_room.bind", room, { group });
    const bound: ChatRoomBinding = { room, group };
    res.json(bound);
  });
  r.delete("/rooms/:room", async (req, res) => {
    const room = roomParam(String(req.params.room));
    await (await refOf(room)).delete();
    await auditAction(req, "chat_room.unbind", room);
    res.status(204).end();
  });
  return r;
}
