/**
 * Chat rooms as Quarry names them (docs/chat.md): a Slack channel is `slack:<team id>:<channel id>`
 * and a Google Chat space `google_chat:spaces/<space id>`. Admins bind rooms to groups by this name
 * and schedules deliver to rooms by it.
 */

/** A room's name: `slack:<team>:<channel>` or `google_chat:spaces/<id>`. */
export const CHAT_ROOM = /^(slack:[A-Z0-9]{1,20}:[A-Z0-9]{1,20}|google_chat:spaces\/[\w-]{1,100})$/;

/** What a room name must look like, in words (for refusals). */
export const CHAT_ROOM_FORMAT = "`slack:<team id>:<channel id>` or `google_chat:spaces/<space id>`";

/** A room an admin bound to a group (`/admin/chat/rooms`): answers there run under the group's scope. */
export interface ChatRoomBinding {
  room: string;
  group: string;
}

/** `GET /admin/chat/rooms`. */
export interface ChatRoomsAnswer {
  rooms: ChatRoomBinding[];
}
