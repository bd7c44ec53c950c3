/**
 * The schedules API (`/schedules`, docs/schedules.md) as the page uses it, with a fresh ID token
 * per request. Shapes are the shared contract's (`schedules.ts`), the types the routes answer with.
 */
import type { Auth } from "firebase/auth";
import type {
  NewScheduleBody,
  PatchScheduleBody,
  SchedulesAnswer,
  ScheduleView,
} from "@quarry/functions/contract";
import { apiRequest } from "../api/client";

const enc = encodeURIComponent;

/** Each schedule call, bound to the API URL and the signed-in person. */
export function schedulesApi(apiUrl: string, auth: Auth) {
  const call = <T>(path: string, method = "GET", body?: unknown) =>
    apiRequest<T>(apiUrl, auth, path, { method, ...(body !== undefined ? { body } : {}) });
  return {
    list: () => call<SchedulesAnswer>("/schedules"),
    get: (id: string) => call<ScheduleView>(`/schedules/${enc(id)}`),
    create: (body: NewScheduleBody) => call<ScheduleView>("/schedules", "POST", body),
    change: (id: string, body: PatchScheduleBody) =>
      call<ScheduleView>(`/schedules/${enc(id)}`, "PATCH", body),
    setPaused: (id: string, paused: boolean) =>
      call<ScheduleView>(`/schedules/${enc(id)}`, "PATCH", { paused }),
    remove: (id: string) => call<void>(`/schedules/${enc(id)}`, "DELETE"),
    runNow: (id: string) => call<{ id: string; queued: boolean }>(`/schedules/${enc(id)}/run`, "POST"),
  };
}

export type SchedulesApi = ReturnType<typeof schedulesApi>;
