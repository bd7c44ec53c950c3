/**
 * Shared conversations as the page uses them (docs/api.md): the owner's links to a thread (make,
 * list, revoke) and a link opened by a member (read it, continue it in a thread of their own). The
 * shapes are the shared contract's.
 */
import type { Auth } from "firebase/auth";
import type { ContinuedShare, ShareLink, SharedConversation, SharesAnswer } from "@quarry/functions/contract";
import { apiRequest } from "../api/client";

const enc = encodeURIComponent;

export function sharesApi(apiUrl: string, auth: Auth) {
  return {
    create: (threadId: string) =>
      apiRequest<ShareLink>(apiUrl, auth, `/threads/${enc(threadId)}/shares`, { method: "POST", body: {} }),
    list: (threadId: string) => apiRequest<SharesAnswer>(apiUrl, auth, `/threads/${enc(threadId)}/shares`),
    revoke: (threadId: string, shareId: string) =>
      apiRequest<void>(apiUrl, auth, `/threads/${enc(threadId)}/shares/${enc(shareId)}`, {
        method: "DELETE",
      }),
    open: (shareId: string) => apiRequest<SharedConversation>(apiUrl, auth, `/shares/${enc(shareId)}`),
    continue: (shareId: string) =>
      apiRequest<ContinuedShare>(apiUrl, auth, `/shares/${enc(shareId)}/continue`, {
        method: "POST",
        body: {},
      }),
  };
}

export type SharesApi = ReturnType<typeof sharesApi>;
