/**
 * The admin API (`/admin/*`, admins only) as the admin section uses it: members, usage, the audit
 * log and proposals. The shapes are the API's answers (see functions/src/http/admin.ts).
 */
import type { Auth } from "firebase/auth";
import type { QuotaLimits, Role } from "@quarry/functions/contract";
import { apiRequest } from "../api/client";

export interface Member {
  email: string;
  role: Role;
  quotas?: Partial<QuotaLimits>;
  addedBy: string;
  addedAt: string;
  updatedAt: string;
}

export interface MembersAnswer {
  members: Member[];
  policy: { allowedDomains: string[]; admins: string[] };
}

export interface Totals {
  questions: number;
  bytes: number;
  tokens: number;
}

export interface UsageAnswer {
  days: number;
  people: { uid: string; email: string | null; today: Totals; period: Totals }[];
}

export type AuditEntry = { at: string; uid: string; email: string | null } & (
  | {
      kind: "query";
      threadId: string;
      runId: string;
      sql: string;
      outcome: string;
      bytesBilled: number;
      durationMs: number;
      jobId?: string;
      error?: string;
    }
  | { kind: "admin"; action: string; target: string; detail?: unknown }
);

export interface AuditAnswer {
  entries: AuditEntry[];
  next?: string;
}

export interface AuditFilter {
  person?: string;
  since?: string;
  until?: string;
}

export interface Proposal {
  id: string;
  question: string;
  sql: string | null;
  note: string | null;
  answer: string;
  uid: string;
}

const enc = encodeURIComponent;

/** Each admin call, bound to the API URL and the signed-in person. */
export function adminApi(apiUrl: string, auth: Auth) {
  const call = <T>(path: string, method = "GET", body?: unknown) =>
    apiRequest<T>(apiUrl, auth, path, { method, ...(body !== undefined ? { body } : {}) });
  return {
    members: () => call<MembersAnswer>("/admin/members"),
    addMember: (email: string, role: Role) => call<Member>("/admin/members", "POST", { email, role }),
    updateMember: (email: string, patch: { role?: Role; quotas?: Partial<QuotaLimits> | null }) =>
      call<Member>(`/admin/members/${enc(email)}`, "PATCH", patch),
    removeMember: (email: string) => call<void>(`/admin/members/${enc(email)}`, "DELETE"),
    usage: (days = 30) => call<UsageAnswer>(`/admin/usage?days=${days}`),
    audit: (filter: AuditFilter, cursor?: string) => {
      const q = new URLSearchParams({ limit: "50" });
      for (const [k, v] of Object.entries({ ...filter, cursor })) if (v) q.set(k, v);
      return call<AuditAnswer>(`/admin/audit?${q.toString()}`);
    },
    proposals: () => call<{ proposals: Proposal[] }>("/admin/proposals"),
    editProposal: (id: string, edit: { question?: string; sql?: string }) =>
      call<unknown>(`/admin/proposals/${id}`, "PATCH", edit),
    approve: (id: string) => call<unknown>(`/admin/proposals/${id}/approve`, "POST"),
    reject: (id: string) => call<void>(`/admin/proposals/${id}/reject`, "POST"),
  };
}

export type AdminApi = ReturnType<typeof adminApi>;
