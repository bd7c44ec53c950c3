/**
 * `/connect?token=…`: the page a chat app's "Connect your Quarry account" link opens. Signed in
 * (the app's sign-in came first), it hands the link's token to `POST /chat/link` once, which links
 * that chat account to this person (docs/chat.md#linking), and says how it went.
 */
import { useEffect, useState } from "react";
import type { Auth } from "firebase/auth";
import { apiRequest } from "../api/client";
import { parseApiError } from "../data/format";

type Outcome =
  { state: "linking" } | { state: "linked"; platform: string } | { state: "failed"; message: string };

const PLATFORM_NAMES: Record<string, string> = { slack: "Slack", google_chat: "Google Chat" };

export function ConnectChatPage({ apiUrl, auth, token }: { apiUrl: string; auth: Auth; token: string }) {
  const [outcome, setOutcome] = useState<Outcome>({ state: "linking" });
  useEffect(() => {
    let live = true;
    apiRequest<{ platform: string }>(apiUrl, auth, "/chat/link", { method: "POST", body: { token } })
      .then(
        (r) => live && setOutcome({ state: "linked", platform: PLATFORM_NAMES[r.platform] ?? r.platform }),
      )
      .catch((err: unknown) => live && setOutcome({ state: "failed", message: parseApiError(err).message }));
    return () => {
      live = false;
    };
  }, [apiUrl, auth, token]);
  return (
    <main className="signin">
      {outcome.state === "linking" ? (
        <p className="muted" role="status">
          Connecting your account…
        </p>
      ) : outcome.state === "linked" ? (
        <p role="status">
          Your {outcome.platform} account is connected to Quarry. Go back to {outcome.platform} and ask your
          question again.
        </p>
      ) : (
        <p role="alert" className="error">
          {outcome.message}
        </p>
      )}
    </main>
  );
}
