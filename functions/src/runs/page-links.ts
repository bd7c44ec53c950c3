/**
 * Links into the page, for every channel that sends them (schedules' webhooks and mail, the chat
 * apps): the page's address and a thread's place in it (`/t/<id>`, as web/src/route.ts reads it).
 */
import { config } from "../config";

/** The page's address (QUARRY_APP_URL, else the project's default Hosting site). */
export function appUrl(): string {
  return config().schedules.appUrl ?? `https://${config().projectId}.web.app`;
}

/** The page's address of a thread. */
export function threadUrl(app: string, threadId: string): string {
  return `${app.replace(/\/+$/, "")}/t/${encodeURIComponent(threadId)}`;
}
