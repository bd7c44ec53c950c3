/**
 * Access as the page sees it: roles, what `GET /me` answers, and the quota figures it shows.
 */

/** `member` asks questions and owns their threads; `admin` also manages members, reviews proposals, reads usage and the audit log. */
export const ROLES = ["member", "admin"] as const;
export type Role = (typeof ROLES)[number];

/** One quota: what was used in its window, its limit, and when the window resets (ISO time). */
export interface QuotaFigure {
  used: number;
  limit: number;
  resetsAt: string;
}

/** A person's quotas, as `GET /me` reports them. */
export interface Quotas {
  questionsPerMinute: QuotaFigure;
  bytesPerDay: QuotaFigure;
  tokensPerDay: QuotaFigure;
}

/**
 * Whose credentials BigQuery runs with: the service account, or (QUARRY_BQ_IDENTITY=user) the
 * person's own, once they have connected BigQuery (`POST /auth/bigquery/start`).
 */
export type BigQueryIdentity =
  | { identity: "service" }
  | { identity: "user"; connected: boolean; /** The Google account that consented. */ email?: string };

/** `GET /me`. */
export interface Me {
  uid: string;
  email: string | null;
  role: Role;
  quotas: Quotas;
  /**
   * What the person can ask about: datasets (`shop`) and single tables (`finance.salaries`) of their
   * scope; empty when they are in no group while groups exist.
   */
  scope: {
    /** True when the person sees every allowed dataset (admins; everyone while no group exists). */
    all: boolean;
    /** As the catalog names them; the scope's own entries while the catalog is still being read. */
    datasets: string[];
  };
  bigquery: BigQueryIdentity;
}

/** Per-person limits an admin may set; a missing one is the deployment's default. */
export interface QuotaLimits {
  questionsPerMinute: number;
  bytesPerDay: number;
  tokensPerDay: number;
}

/** How the page shows answers: `business` (the answer, chart, key figures and how it was computed; SQL and rows behind Details) or `analyst` (everything open). */
export const VIEWS = ["business", "analyst"] as const;
export type View = (typeof VIEWS)[number];

/** `GET|PATCH /me/preferences`: the person's view, and where it comes from. */
export interface Preferences {
  view: View;
  /** `person`: they chose it; `group`: their group's default (`group` names it); `default`: analyst. */
  source: "person" | "group" | "default";
  group?: string;
}
