/**
 * MCP clients the person allowed through OAuth (a hosted assistant: docs/mcp.md): who each is (the
 * host of its client ID, beside the name it gives itself), when it was allowed, and Disconnect —
 * its refresh token is refused at once and its access tokens within the access cache's window.
 */
import { useCallback } from "react";
import type { ConnectedClient } from "@quarry/functions/contract";
import { useAction, useLoad } from "../admin/useLoad";
import type { TokensApi } from "./api";

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : "—");

function ClientRow({ c, api, onGone }: { c: ConnectedClient; api: TokensApi; onGone: () => void }) {
  const [error, busy, run] = useAction();
  const label = c.clientName ? `${c.clientName} (${c.clientHost})` : c.clientHost;
  const disconnect = async () => {
    if (!window.confirm(`Disconnect ${label}? It can no longer use Quarry as you until you allow it again.`))
      return;
    if (await run(() => api.disconnect(c.id))) onGone();
  };
  return (
    <tr data-client={c.id}>
      <td>
        {c.clientName && <strong>{c.clientName} </strong>}
        <code title={c.clientId}>{c.clientHost}</code>
      </td>
      <td>{when(c.allowedAt)}</td>
      <td>{when(c.expiresAt)}</td>
      <td>
        <button
          type="button"
          disabled={busy}
          onClick={() => void disconnect()}
          aria-label={`Disconnect ${label}`}
        >
          Disconnect
        </button>
        {error && (
          <p role="alert" className="error small">
            {error}
          </p>
        )}
      </td>
    </tr>
  );
}

export function ConnectedClientsSection({ api }: { api: TokensApi }) {
  const load = useCallback(() => api.clients(), [api]);
  const { data, error, reload } = useLoad(load);
  const clients = data?.clients ?? [];
  return (
    <section className="admin-section" aria-labelledby="clients-title">
      <h3 id="clients-title">Connected assistants</h3>
      <p className="small muted">
        Hosted assistants you allowed to use Quarry as you (through OAuth). The host is who the assistant is;
        the name is what it calls itself.
      </p>
      {error && (
        <p role="alert" className="error small">
          {error}
        </p>
      )}
      {data && !clients.length && <p className="muted small">No connected assistants.</p>}
      {clients.length > 0 && (
        <div className="table-wrap">
          <table aria-label="Connected assistants">
            <thead>
              <tr>
                <th>Assistant</th>
                <th>Allowed</th>
                <th>Until</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {clients.map((c) => (
                <ClientRow key={c.id} c={c} api={api} onGone={() => void reload()} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
