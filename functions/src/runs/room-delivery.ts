/**
 * How a channel hands an answer to a chat room without importing the chat channel (channels never
 * import each other; app.ts and index.ts compose them): the schedules check a room when one is
 * saved and post each scheduled answer through this port, which chat/ implements
 * (chat/schedule-rooms.ts).
 */
import type { ColumnInfo, Row } from "../contract/events";

/** A scheduled answer, as a room is given it. */
export interface RoomAnswer {
  /** The schedule's owner: the answer ran under their scope. */
  uid: string;
  scheduleId: string;
  name: string;
  /** The schedule's conversation, which a follow-up in the room's thread continues. */
  threadId: string;
  /** The question's message id (feedback names the turn by it). */
  questionId: string;
  runId: string;
  answer: string;
  result?: { columns: ColumnInfo[]; rows: Row[]; totalRows: number; totalRowsAtLeast?: boolean };
  sql: string;
  /** The alert's summary, when it fired. */
  alert?: string;
}

export interface RoomDelivery {
  /**
   * Why `uid`'s answers may not go to `room`, in words that say what to do; undefined when they
   * may (the room's app is on, the person's chat account is linked and they are in the room).
   */
  check(uid: string, room: string): Promise<string | undefined>;
  /** Posts the answer to the room as the app (checked again first); why not, in words. */
  post(room: string, answer: RoomAnswer): Promise<string | undefined>;
}
