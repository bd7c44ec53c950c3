/**
 * The admin API's shapes (`/admin/*`), shared by the routes (functions/src/http/admin.ts,
 * proposals.ts) and the page's admin section: a shape changed on one side fails the typecheck of
 * the other. `GET /me` is in access.ts.
 */
import type { QuotaLimits, Role, View } from "./access";

/** A members-list entry (`GET|POST /admin/members`, `PATCH /admin/members/:email`). */
export interface Member {
  email: string;
  role: Role;
  /** Per-person quota overrides; a missing one is the deployment's default. */
  quotas?: Partial<QuotaLimits>;
  /** The groups whose datasets this member may see, sorted; empty = in none. */
  groups: string[];
  addedBy: string;
  addedAt: string;
  updatedAt: string;
}

/** `GET /admin/members`: the list, the deployment's own policy (domains, admins) and the groups one may join. */
export interface MembersAnswer {
  members: Member[];
  policy: { allowedDomains: string[]; admins: string[] };
  /** The names of the groups defined, sorted (what `groups` of a member may name). */
  groups: string[];
}

/**
 * A group (`GET|POST /admin/groups`, `PATCH /admin/groups/:name`): a name and the datasets
 * (`shop`) or single tables (`finance.salaries`) its members may see, with the members in it.
 */
export interface Group {
  name: string;
  /** Datasets and `dataset.table` entries, lower case, sorted. */
  datasets: string[];
  /** The emails of the members-list entries in this group, sorted. */
  members: string[];
  /** The view its members get unless they chose one (`GET /me/preferences`). */
  defaultView?: View;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
}

/** `GET /admin/groups`: every group, by name. None = every member sees every allowed dataset. */
export interface GroupsAnswer {
  groups: Group[];
}

/** `POST /admin/groups`. */
export interface NewGroup {
  name: string;
  datasets: string[];
}

/** Questions, bytes billed and model tokens. */
export interface UsageTotals {
  questions: number;
  bytes: number;
  tokens: number;
}

/** `GET /admin/usage?days=N`: per person, today and over the period. */
export interface UsageAnswer {
  days: number;
  people: { uid: string; email: string | null; today: UsageTotals; period: UsageTotals }[];
}

/** How a query ended in the audit log: ran, failed in the engine, or refused by a check. */
export type QueryOutcome = "ok" | "error" | "refused";

/** What a failed or refused query's entry says went wrong: the tool error's category and words. */
export interface AuditError {
  category: string;
  message: string;
}

/** What an admin did. */
export type AdminAction =
  | "member.add"
  | "member.update"
  | "member.remove"
  | "group.create"
  | "group.update"
  | "group.delete"
  | "proposal.approve"
  | "proposal.reject"
  | "proposal.edit"
  | "schedule.pause"
  | "schedule.resume"
  | "import.push"
  | "import.apply"
  | "import.dismiss"
  | "chat_room.bind"
  | "chat_room.unbind";

/**
 * What a person did with a shared conversation (`kind: "share"` entries): made or revoked a link
 * (its owner), opened one or continued it in a thread of their own (anyone with the link).
 */
export type ShareAction = "share.create" | "share.revoke" | "share.open" | "share.continue";

/** One audit-log entry as `GET /admin/audit` answers it. */
export type AuditEntry = { at: string; uid: string; email: string | null } & (
  | {
      kind: "query";
      threadId: string;
      runId: string;
      sql: string;
      outcome: QueryOutcome;
      bytesBilled: number;
      estimatedBytes?: number;
      durationMs: number;
      jobId?: string;
      error?: AuditError;
    }
  | { kind: "admin"; action: AdminAction; target: string; detail?: Record<string, unknown> }
  | {
      kind: "share";
      action: ShareAction;
      shareId: string;
      /** The shared thread. */
      threadId: string;
      /** The uid of the conversation's owner. */
      owner: string;
      /** `refused`: the person's data scope does not cover the conversation (they were answered not found). */
      outcome: "ok" | "refused";
      /** `share.continue`: the person's new thread. */
      newThreadId?: string;
    }
  | {
      kind: "upload";
      threadId: string;
      file: string;
      /** How SQL names the table (`uploads.<name>` or `project.dataset.table`). */
      table: string;
      rows: number;
      bytes: number;
      outcome: QueryOutcome;
      error?: { code: string; message: string };
    }
);

/** `GET /admin/audit`: a page of entries, newest first; `next` is the cursor of the following page. */
export interface AuditAnswer {
  entries: AuditEntry[];
  next?: string;
}

/** `GET /admin/audit`'s filters. */
export interface AuditFilter {
  person?: string;
  since?: string;
  until?: string;
}

/** A verified query proposed by up-votes, waiting for review (`GET /admin/proposals`). */
export interface ProposalView {
  id: string;
  question: string;
  sql: string | null;
  note: string | null;
  answer: string;
  uid: string;
}

/** `GET /admin/proposals`. */
export interface ProposalsAnswer {
  proposals: ProposalView[];
}

/** One change of a re-import against the active one (functions/src/context/imports/diff.ts). */
export interface ImportChangeView {
  /** What `POST /admin/context/imports/:id/apply` takes to apply this change alone. */
  id: string;
  kind: string;
  item: string;
  detail?: string;
}

/** How much an imported layer holds. */
export interface ImportLayerSummary {
  generatedAt: string;
  checksum: string;
  tables: number;
  columns: number;
  joins: number;
  metrics: number;
  metricsWithSql: number;
  savedQueries: number;
}

/**
 * A dbt or LookML project's import (`GET /admin/context/imports`): the layer in use, and the one
 * pushed since that waits for review, with its changes against the one in use.
 */
export interface ContextImportView {
  id: string;
  source: "dbt" | "lookml";
  project: string;
  active?: ImportLayerSummary & { appliedAt: string; appliedBy: string };
  pending?: ImportLayerSummary & {
    pushedAt: string;
    pushedBy: string;
    changes: ImportChangeView[];
    notices: { item: string; message: string }[];
  };
}

/** `GET /admin/context/imports`. */
export interface ContextImportsAnswer {
  imports: ContextImportView[];
}
