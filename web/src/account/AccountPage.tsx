/** The account page (`/account`): the signed-in person's own things — access tokens for MCP clients, and the assistants they allowed through OAuth. */
import { useMemo } from "react";
import type { Auth } from "firebase/auth";
import { PartBoundary } from "../PartBoundary";
import { tokensApi } from "./api";
import { TokensSection } from "./TokensSection";
import { ConnectedClientsSection } from "./ConnectedClientsSection";

export function AccountPage({ apiUrl, auth }: { apiUrl: string; auth: Auth }) {
  const api = useMemo(() => tokensApi(apiUrl, auth), [apiUrl, auth]);
  return (
    <main className="admin" aria-labelledby="account-title">
      <h2 id="account-title">Your account</h2>
      <PartBoundary label="Access tokens">
        <TokensSection api={api} apiUrl={apiUrl} />
      </PartBoundary>
      <PartBoundary label="Connected assistants">
        <ConnectedClientsSection api={api} />
      </PartBoundary>
    </main>
  );
}
