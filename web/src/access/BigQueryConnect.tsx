/**
 * User identity mode (the server's QUARRY_BQ_IDENTITY=user): BigQuery runs with the person's own
 * Google account once they have connected it. `useBigQuery` knows whether they have (from
 * `GET /me`) and how the last connect ended (`?bigquery=connected|error&reason=…`, which Google's
 * round trip leaves on the page's address and this removes); `connect` asks the API for Google's
 * consent page and goes there; `disconnect` revokes. The header shows the control; a turn that
 * ended with `auth:bigquery_consent` offers the same Connect button (through the context).
 */
import { createContext, useCallback, useContext, useState } from "react";
import type { Auth } from "firebase/auth";
import type { BigQueryIdentity } from "@quarry/functions/contract";
import { apiRequest } from "../api/client";
import { errorInWords } from "../data/format";

const REASONS: Record<string, string> = {
  denied: "BigQuery was not connected: access was not allowed.",
  wrong_account: "BigQuery was not connected: allow access with the same Google account you signed in with.",
  scope: "BigQuery was not connected: tick BigQuery access on Google's page.",
  offline: "BigQuery was not connected: Google gave no lasting access. Try again.",
  exchange: "BigQuery was not connected: Google's answer could not be used. Try again.",
};

/** How the last connect round trip ended, read once from the address (and removed from it). */
function takeOutcome(): string | null {
  const url = new URL(window.location.href);
  const outcome = url.searchParams.get("bigquery");
  if (!outcome) return null;
  const reason = url.searchParams.get("reason") ?? "";
  url.searchParams.delete("bigquery");
  url.searchParams.delete("reason");
  window.history.replaceState(window.history.state, "", url.toString());
  return outcome === "connected" ? "BigQuery connected." : (REASONS[reason] ?? "BigQuery was not connected.");
}

export interface BigQueryConnection {
  identity: BigQueryIdentity;
  /** What the last action or round trip said, for a status line. */
  notice: string | null;
  busy: boolean;
  connect(): Promise<void>;
  disconnect(): Promise<void>;
}

export function useBigQuery(apiUrl: string, auth: Auth, initial: BigQueryIdentity): BigQueryConnection {
  const [identity, setIdentity] = useState(initial);
  const [notice, setNotice] = useState<string | null>(() =>
    initial.identity === "user" ? takeOutcome() : null,
  );
  const [busy, setBusy] = useState(false);
  const connect = useCallback(async () => {
    setBusy(true);
    try {
      const { url } = await apiRequest<{ url: string }>(apiUrl, auth, "/auth/bigquery/start", {
        method: "POST",
        body: { returnTo: window.location.href },
      });
      window.location.assign(url);
    } catch (e) {
      setNotice(errorInWords(e));
      setBusy(false);
    }
  }, [apiUrl, auth]);
  const disconnect = useCallback(async () => {
    setBusy(true);
    try {
      await apiRequest(apiUrl, auth, "/auth/bigquery", { method: "DELETE" });
      setIdentity({ identity: "user", connected: false });
      setNotice("BigQuery disconnected.");
    } catch (e) {
      setNotice(errorInWords(e));
    } finally {
      setBusy(false);
    }
  }, [apiUrl, auth]);
  return { identity, notice, busy, connect, disconnect };
}

/** Connect, for a turn that ended because BigQuery access is missing; absent in service mode. */
export const ConnectBigQueryContext = createContext<(() => Promise<void>) | undefined>(undefined);

export function ConnectBigQueryButton() {
  const connect = useContext(ConnectBigQueryContext);
  if (!connect) return null;
  return (
    <button type="button" className="connect-bigquery" onClick={() => void connect()}>
      Connect BigQuery
    </button>
  );
}

/** The header's control: Connect BigQuery, or who is connected and Disconnect. Nothing in service mode. */
export function BigQueryControl({ bq }: { bq: BigQueryConnection }) {
  const id = bq.identity;
  if (id.identity !== "user") return null;
  return (
    <span className="bigquery-control small">
      {id.connected ? (
        <button
          type="button"
          className="link"
          disabled={bq.busy}
          title={id.email ? `BigQuery runs as ${id.email}` : undefined}
          onClick={() => void bq.disconnect()}
        >
          Disconnect BigQuery
        </button>
      ) : (
        <button type="button" disabled={bq.busy} onClick={() => void bq.connect()}>
          Connect BigQuery
        </button>
      )}
      {bq.notice && (
        <span className="notice" role="status">
          {bq.notice}
        </span>
      )}
    </span>
  );
}
