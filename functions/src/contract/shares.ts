/**
 * Shared conversations as the API answers about them (`/threads/:id/shares`, `/shares/:id`,
 * docs/api.md) and the page opens them (`/s/<id>`, docs/web.md#sharing).
 */

/** How the page's path of a share link looks: `/s/<id>`. */
export const sharePath = (id: string): string => `/s/${id}`;

/** A share id: 24 characters of base64url (144 random bits). Anything else is an unknown link. */
export const SHARE_ID = /^[A-Za-z0-9_-]{24}$/;

/** A link to a conversation, as its owner sees it (`POST|GET /threads/:id/shares`). */
export interface ShareLink {
  id: string;
  /** The page's path that opens it (`/s/<id>`), to put after the page's origin. */
  url: string;
  createdAt: string;
}

/** `GET /threads/:id/shares`: the thread's links not revoked, newest first. */
export interface SharesAnswer {
  shares: ShareLink[];
}

/**
 * `GET /shares/:id`: the conversation read-only — its questions, the queries that ran with their
 * rows as stored, and the answers with what their messages carry (`response_metadata`), as the
 * thread's state holds them (plain message dicts), without the schema look-ups.
 */
export interface SharedConversation {
  id: string;
  title: string;
  /** The owner's email, when their account has one. */
  sharedBy: string | null;
  /** When the link was made. */
  createdAt: string;
  messages: Record<string, unknown>[];
  /** Older turns were folded into a summary (not shown). */
  summarized: boolean;
}

/** `POST /shares/:id/continue`: the viewer's own new thread, holding a copy of the conversation. */
export interface ContinuedShare {
  thread_id: string;
}
