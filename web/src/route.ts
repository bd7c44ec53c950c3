/**
 * The page's place lives in the URL: the open thread (`/t/<id>`), so a reload or a shared link
 * reopens it, the admin section (`/admin`), the account page (`/account`), the person's schedules (`/schedules`)
 * and a shared conversation (`/s/<shareId>`). Every route hook listens to `popstate`; `navigate`
 * pushes a path and announces it the same way, so all of them follow.
 */
import { useCallback, useEffect, useState } from "react";

const PATTERN = /^\/t\/([0-9A-Za-z-]{1,128})\/?$/;
const ADMIN = /^\/admin\/?$/;
const ACCOUNT = /^\/account\/?$/;
const SCHEDULES = /^\/schedules\/?$/;
const SHARE = /^\/s\/([A-Za-z0-9_-]{1,64})\/?$/;
const CONNECT = /^\/connect\/?$/;

function threadFromPath(path: string): string | null {
  return PATTERN.exec(path)?.[1] ?? null;
}

/** Goes to `path` (a new history entry, or replacing this one) and tells every route hook. */
function navigate(path: string, replace = false): void {
  if (window.location.pathname === path) return;
  if (replace) window.history.replaceState(null, "", path);
  else window.history.pushState(null, "", path);
  window.dispatchEvent(new PopStateEvent("popstate"));
}

/** A value read from the path, kept in step with the history. */
function usePathValue<T>(read: (path: string) => T): T {
  const [value, setValue] = useState(() => read(window.location.pathname));
  useEffect(() => {
    const onPop = () => setValue(read(window.location.pathname));
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, [read]);
  return value;
}

const isAdminPath = (path: string) => ADMIN.test(path);
const isAccountPath = (path: string) => ACCOUNT.test(path);
const isSchedulesPath = (path: string) => SCHEDULES.test(path);
const shareFromPath = (path: string) => SHARE.exec(path)?.[1] ?? null;

export function useThreadRoute(): [string | null, (id: string | null, replace?: boolean) => void] {
  const id = usePathValue(threadFromPath);
  const go = useCallback((next: string | null, replace = false) => {
    navigate(next ? `/t/${next}` : "/", replace);
  }, []);
  return [id, go];
}

/** Whether the admin section is open (`/admin`), and a way to open or leave it. */
export function useAdminRoute(): [boolean, (open: boolean) => void] {
  const open = usePathValue(isAdminPath);
  const go = useCallback((next: boolean) => navigate(next ? "/admin" : "/"), []);
  return [open, go];
}

/** Whether the account page is open (`/account`), and a way to open or leave it. */
export function useAccountRoute(): [boolean, (open: boolean) => void] {
  const open = usePathValue(isAccountPath);
  const go = useCallback((next: boolean) => navigate(next ? "/account" : "/"), []);
  return [open, go];
}

/** Whether the person's schedules page is open (`/schedules`), and a way to open or leave it. */
export function useSchedulesRoute(): [boolean, (open: boolean) => void] {
  const open = usePathValue(isSchedulesPath);
  const go = useCallback((next: boolean) => navigate(next ? "/schedules" : "/"), []);
  return [open, go];
}

/** The shared conversation open (`/s/<shareId>`), if any; leaving it is opening anything else. */
export function useShareRoute(): string | null {
  return usePathValue(shareFromPath);
}

/** A chat app's connect link (`/connect?token=…`), if that is what is open: its token. */
export function useConnectRoute(): string | null {
  return usePathValue(connectTokenOf);
}

function connectTokenOf(path: string): string | null {
  return CONNECT.test(path) ? new URLSearchParams(window.location.search).get("token") : null;
}
