/**
 * The person's view (`GET|PATCH /me/preferences`): business or analyst. Kept by the server, so the
 * MCP `ask` text follows it too; a person who never chose gets their group's default.
 */
import { useCallback, useEffect, useState } from "react";
import type { Auth } from "firebase/auth";
import type { Preferences, View } from "@quarry/functions/contract";
import { apiRequest } from "../api/client";

export function usePreferences(apiUrl: string, auth: Auth) {
  const [prefs, setPrefs] = useState<Preferences | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    apiRequest<Preferences>(apiUrl, auth, "/me/preferences")
      .then((p) => live && setPrefs(p))
      .catch((e: unknown) => live && setError(e instanceof Error ? e.message : String(e)));
    return () => {
      live = false;
    };
  }, [apiUrl, auth]);
  const setView = useCallback(
    async (view: View) => {
      try {
        setPrefs(
          await apiRequest<Preferences>(apiUrl, auth, "/me/preferences", { method: "PATCH", body: { view } }),
        );
        setError(null);
      } catch (e) {
        setError(e instanceof Error ? e.message : String(e));
      }
    },
    [apiUrl, auth],
  );
  return { view: prefs?.view ?? "analyst", prefs, error, setView };
}
