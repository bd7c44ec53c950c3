/**
 * The admin API (`/admin/*`, admins only) as the admin section uses it: members, groups, usage,
 * the audit log, proposals, imported definitions, schedules and chat rooms bound to groups. The shapes are the shared contract's (`@quarry/functions/contract`, admin.ts),
 * the same types the routes answer with.
 */
import type { Auth } from "firebase/auth";
import type {
  AuditAnswer,
  AuditFilter,
  ContextImportView,
  ContextImportsAnswer,
  Group,
  GroupsAnswer,
  Member,
  MembersAnswer,
  NewGroup,
  ProposalsAnswer,
  QuotaLimits,
  Role,
  SchedulesAnswer,
  ChatRoomBinding,
  ChatRoomsAnswer,
  ScheduleView,
  UsageAnswer,
  View,
} from "@quarry/functions/contract";
import { apiRequest } from "../api/client";

const enc = encodeURIComponent;

/** Each admin call, bound to the API URL and the signed-in person. */
export function adminApi(apiUrl: string, auth: Auth) {
  const call = <T>(path: string, method = "GET", body?: unknown) =>
    apiRequest<T>(apiUrl, auth, path, { method, ...(body !== undefined ? { body } : {}) });
  return {
    members: () => call<MembersAnswer>("/admin/members"),
    addMember: (email: string, role: Role) => call<Member>("/admin/members", "POST", { email, role }),
    updateMember: (
      email: string,
      patch: { role?: Role; quotas?: Partial<QuotaLimits> | null; groups?: string[] },
    ) => call<Member>(`/admin/members/${enc(email)}`, "PATCH", patch),
    removeMember: (email: string) => call<void>(`/admin/members/${enc(email)}`, "DELETE"),
    groups: () => call<GroupsAnswer>("/admin/groups"),
    createGroup: (group: NewGroup) => call<Group>("/admin/groups", "POST", group),
    updateGroup: (name: string, datasets: string[]) =>
      call<Group>(`/admin/groups/${enc(name)}`, "PATCH", { datasets }),
    setGroupView: (name: string, defaultView: View | null) =>
      call<Group>(`/admin/groups/${enc(name)}`, "PATCH", { defaultView }),
    removeGroup: (name: string) => call<void>(`/admin/groups/${enc(name)}`, "DELETE"),
    usage: (days = 30) => call<UsageAnswer>(`/admin/usage?days=${days}`),
    audit: (filter: AuditFilter, cursor?: string) => {
      const q = new URLSearchParams({ limit: "50" });
      for (const [k, v] of Object.entries({ ...filter, cursor })) if (v) q.set(k, v);
      return call<AuditAnswer>(`/admin/audit?${q.toString()}`);
    },
    proposals: () => call<ProposalsAnswer>("/admin/proposals"),
    editProposal: (id: string, edit: { question?: string; sql?: string }) =>
      call<unknown>(`/admin/proposals/${id}`, "PATCH", edit),
    approve: (id: string) => call<unknown>(`/admin/proposals/${id}/approve`, "POST"),
    reject: (id: string) => call<void>(`/admin/proposals/${id}/reject`, "POST"),
    contextImports: () => call<ContextImportsAnswer>("/admin/context/imports"),
    applyImport: (id: string, review: { checksum?: string; changes?: string[] }) =>
      call<ContextImportView>(`/admin/context/imports/${enc(id)}/apply`, "POST", review),
    dismissImport: (id: string) => call<void>(`/admin/context/imports/${enc(id)}/pending`, "DELETE"),
    schedules: () => call<SchedulesAnswer>("/admin/schedules"),
    chatRooms: () => call<ChatRoomsAnswer>("/admin/chat/rooms"),
    bindRoom: (room: string, group: string) =>
      call<ChatRoomBinding>(`/admin/chat/rooms/${enc(room)}`, "PUT", { group }),
    unbindRoom: (room: string) => call<void>(`/admin/chat/rooms/${enc(room)}`, "DELETE"),
    pauseSchedule: (id: string, paused: boolean) =>
      call<ScheduleView>(`/admin/schedules/${enc(id)}`, "PATCH", { paused }),
  };
}

export type AdminApi = ReturnType<typeof adminApi>;
