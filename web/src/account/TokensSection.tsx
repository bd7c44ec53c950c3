/**
 * Access tokens for MCP clients (IDEs, CLIs, scripts): make one (a name, 1–90 days), see it once
 * with client configuration for this deployment's `/mcp`, list yours (created, last used, expiry)
 * and revoke one. The API's refusals are shown in its words.
 */
import { useCallback, useState } from "react";
import {
  MAX_TOKEN_DAYS,
  MAX_TOKEN_NAME_CHARS,
  type NewToken,
  type TokenInfo,
} from "@quarry/functions/contract";
import { useAction, useLoad } from "../admin/useLoad";
import type { TokensApi } from "./api";
import { mcpUrl } from "./mcp-config";
import { NewTokenPanel } from "./NewTokenPanel";

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : "never");

function CreateForm({ api, onMade }: { api: TokensApi; onMade: (t: NewToken) => void }) {
  const [name, setName] = useState("");
  const [days, setDays] = useState("30");
  const [error, busy, run] = useAction();
  const submit = async () => {
    const ok = await run(async () => onMade(await api.create(name.trim(), Number(days))));
    if (ok) setName("");
  };
  return (
    <form
      className="admin-form"
      aria-label="Create a token"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <label>
        Token name
        <input
          value={name}
          maxLength={MAX_TOKEN_NAME_CHARS}
          placeholder="laptop IDE"
          onChange={(e) => setName(e.target.value)}
        />
      </label>
      <label>
        Days until it expires
        <input
          type="number"
          min={1}
          max={MAX_TOKEN_DAYS}
          value={days}
          onChange={(e) => setDays(e.target.value)}
        />
      </label>
      <button type="submit" disabled={busy}>
        Create token
      </button>
      {error && (
        <p role="alert" className="error small">
          {error}
        </p>
      )}
    </form>
  );
}

function TokenRow({ t, api, onRevoked }: { t: TokenInfo; api: TokensApi; onRevoked: () => void }) {
  const [error, busy, run] = useAction();
  const revoke = async () => {
    if (!window.confirm(`Revoke the token ${t.name}? Clients using it are refused at once.`)) return;
    if (await run(() => api.revoke(t.id))) onRevoked();
  };
  return (
    <tr data-token={t.id}>
      <td>{t.name}</td>
      <td>{when(t.created_at)}</td>
      <td>{when(t.last_used_at)}</td>
      <td>{when(t.expires_at)}</td>
      <td>
        <button type="button" disabled={busy} onClick={() => void revoke()} aria-label={`Revoke ${t.name}`}>
          Revoke
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

export function TokensSection({ api, apiUrl }: { api: TokensApi; apiUrl: string }) {
  const load = useCallback(() => api.list(), [api]);
  const { data, error, reload } = useLoad(load);
  const [made, setMade] = useState<NewToken | null>(null);
  const tokens = data?.tokens ?? [];
  return (
    <section className="admin-section" aria-labelledby="tokens-title">
      <h3 id="tokens-title">Access tokens for MCP clients</h3>
      <p className="small muted">
        An IDE, a CLI or another agent uses a token to ask Quarry as you, with your access and quotas.
      </p>
      <CreateForm
        api={api}
        onMade={(t) => {
          setMade(t);
          void reload();
        }}
      />
      {made && <NewTokenPanel made={made} url={mcpUrl(apiUrl)} onDone={() => setMade(null)} />}
      {error && (
        <p role="alert" className="error small">
          {error}
        </p>
      )}
      {data && !tokens.length && <p className="muted small">No tokens yet.</p>}
      {tokens.length > 0 && (
        <div className="table-wrap">
          <table aria-label="Your tokens">
            <thead>
              <tr>
                <th>Name</th>
                <th>Created</th>
                <th>Last used</th>
                <th>Expires</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {tokens.map((t) => (
                <TokenRow key={t.id} t={t} api={api} onRevoked={() => void reload()} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
