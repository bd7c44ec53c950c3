/**
 * What an empty conversation offers (`GET /first-screen`): starter questions and the datasets.
 * Loaded once per page; a failure leaves the generic examples (the chat still works).
 */
import { useEffect, useState } from "react";
import type { Auth } from "firebase/auth";
import type { FirstScreen } from "@quarry/functions/contract";
import { apiRequest } from "../api/client";

export function useFirstScreen(apiUrl: string, auth: Auth, wanted: boolean): FirstScreen | null {
  const [value, setValue] = useState<FirstScreen | null>(null);
  const [asked, setAsked] = useState(false);
  useEffect(() => {
    if (!wanted || asked) return;
    setAsked(true);
    apiRequest<FirstScreen>(apiUrl, auth, "/first-screen").then(setValue, () => setValue(null));
  }, [apiUrl, auth, wanted, asked]);
  return value;
}
