/**
 * Who the signed-in person is to Quarry (`GET /me`): their role and quotas, or why they may not use
 * it — not a member (403 `forbidden:not_member`) or no access policy yet (503
 * `access:not_configured`), each with the server's message naming whom to ask.
 */
import { useCallback, useEffect, useState } from "react";
import type { Auth } from "firebase/auth";
import type { Me } from "@quarry/functions/contract";
import { apiRequest } from "../api/client";
import { errorInWords, parseApiError } from "../data/format";

export type MeState =
  | { state: "loading" }
  | { state: "ready"; me: Me }
  | { state: "denied"; code: string; message: string }
  | { state: "failed"; message: string };

const REFUSALS = new Set(["forbidden:not_member", "access:not_configured"]);

export function useMe(apiUrl: string, auth: Auth): MeState & { retry: () => void } {
  const [value, setValue] = useState<MeState>({ state: "loading" });
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    let live = true;
    apiRequest<Me>(apiUrl, auth, "/me").then(
      (me) => live && setValue({ state: "ready", me }),
      (e: unknown) => {
        if (!live) return;
        const { code, message } = parseApiError(e);
        if (code && REFUSALS.has(code)) setValue({ state: "denied", code, message });
        else setValue({ state: "failed", message: errorInWords(e) });
      },
    );
    return () => {
      live = false;
    };
  }, [apiUrl, auth, attempt]);
  const retry = useCallback(() => {
    setValue({ state: "loading" });
    setAttempt((n) => n + 1);
  }, []);
  return { ...value, retry };
}
