/**
 * The chat channels' routes on the `api` function (docs/chat.md). `/slack/events` and
 * `/slack/interactions` carry Slack's own signature instead of a Firebase ID token, so they are
 * mounted before sign-in; every request is verified before anything is read or stored. `POST
 * /chat/link` is the page's call that links a chat user to the signed-in member: it sits behind
 * sign-in and the access gate like every API route (`chatLinkRoutes`), with the admins' rooms bound
 * to groups (`/admin/chat/rooms`). Handlers load on first use.
 */
import { Router } from "express";
import type { RoomDelivery } from "../runs/room-delivery";

/** Scheduled answers to chat rooms (chat/schedule-rooms.ts), loaded on first use. */
export const chatRoomDelivery: RoomDelivery = {
  check: async (uid, room) => (await import("./schedule-rooms.js")).scheduleRooms.check(uid, room),
  post: async (room, answer) => (await import("./schedule-rooms.js")).scheduleRooms.post(room, answer),
};

/** Slack's endpoints (before sign-in). */
export function chatRoutes(): Router {
  const r = Router();
  r.post("/slack/events", async (req, res) => {
    const { slackEvent } = await import("./slack/events.js");
    await slackEvent(req, res);
  });
  r.post("/slack/interactions", async (req, res) => {
    const { slackInteraction } = await import("./slack/interactions.js");
    await slackInteraction(req, res);
  });
  // Charts for chat cards, by signed, expiring URL (chart-url.ts).
  r.get("/chat/charts/:file", async (req, res) => {
    const { serveChart } = await import("./chart-url.js");
    await serveChart(req, res);
  });
  // Google Chat's HTTP endpoint: its bearer token, verified before anything.
  r.post("/chat/events", async (req, res) => {
    const { googleChatEvent } = await import("./google/events.js");
    await googleChatEvent(req, res);
  });
  return r;
}

/** The page's link call (behind sign-in and the access gate). */
export function chatLinkRoutes(): Router {
  const r = Router();
  r.post("/chat/link", async (req, res) => {
    const { linkChatUser } = await import("./link.js");
    await linkChatUser(req, res);
  });
  // Rooms bound to a group (admins only): loaded with their first request.
  let rooms: Promise<Router> | undefined;
  r.use("/admin/chat", (req, res, next) => {
    rooms ??= import("./rooms.js").then((m) => m.roomRoutes());
    rooms.then((routes) => routes(req, res, next), next);
  });
  return r;
}
