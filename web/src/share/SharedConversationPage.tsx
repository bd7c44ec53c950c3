/**
 * A shared conversation (`/s/<id>`), read-only: its turns drawn by the chat's own TurnView (given no
 * callbacks, a turn offers nothing to ask, answer, vote on or schedule), so whatever an answer shows
 * in a person's own conversation it shows here too. **Continue in my own conversation** copies it into
 * a new thread of the viewer's and opens it. A link that does not open (unknown, revoked, or a
 * conversation outside the viewer's data) shows the same not-found view.
 */
import { useCallback, useMemo } from "react";
import type { Auth } from "firebase/auth";
import type { SharedConversation, View } from "@quarry/functions/contract";
import { PartBoundary } from "../PartBoundary";
import { TurnView } from "../chat/TurnView";
import { turnsFromMessages, type MessageDict } from "../chat/model";
import { errorInWords, parseApiError } from "../data/format";
import type { Settings } from "../settings/useSettings";
import { useAction, useLoad } from "../admin/useLoad";
import { sharesApi } from "./api";
import "./share.css";

interface Props {
  apiUrl: string;
  auth: Auth;
  shareId: string;
  settings: Settings;
  onPageSizeChange(size: number): void;
  /** The viewer's own view (business or analyst), as their conversations show answers. */
  view?: View;
  /** Opens a thread of the viewer's (the copy), or their conversations (null). */
  onOpenThread(id: string | null): void;
}

/** Loads the conversation; a 404 is "not found", anything else an error in words. */
function useShared(apiUrl: string, auth: Auth, shareId: string) {
  const api = useMemo(() => sharesApi(apiUrl, auth), [apiUrl, auth]);
  const load = useCallback(
    () =>
      api.open(shareId).then(
        (conversation) => ({ conversation, notFound: false, error: null }),
        (e: unknown) =>
          parseApiError(e).status === 404
            ? { conversation: null, notFound: true, error: null }
            : { conversation: null, notFound: false, error: errorInWords(e) },
      ),
    [api, shareId],
  );
  return { api, loaded: useLoad(load) };
}

function NotFound({ onHome }: { onHome(): void }) {
  return (
    <section className="shared not-found" aria-label="Shared conversation">
      <h1>Conversation not found</h1>
      <p>
        This link does not open a conversation: it may have been revoked or mistyped, or the conversation is
        not one you can see. Ask the person who sent it.
      </p>
      <button type="button" onClick={onHome}>
        Go to your conversations
      </button>
    </section>
  );
}

function Conversation({
  conversation,
  settings,
  onPageSizeChange,
  onContinue,
  view,
}: Pick<Props, "settings" | "onPageSizeChange" | "view"> & {
  conversation: SharedConversation;
  onContinue(): Promise<unknown>;
}) {
  const turns = useMemo(
    () => turnsFromMessages(conversation.messages as unknown as MessageDict[]),
    [conversation],
  );
  const [error, busy, run] = useAction();
  return (
    <section className="shared" aria-label="Shared conversation">
      <header className="shared-head">
        <div>
          <h1>{conversation.title || "Shared conversation"}</h1>
          <p className="small muted">
            Shared{conversation.sharedBy ? ` by ${conversation.sharedBy}` : ""} · read-only
          </p>
        </div>
        <button type="button" className="primary" disabled={busy} onClick={() => void run(onContinue)}>
          Continue in my own conversation
        </button>
      </header>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {conversation.summarized && (
        <p className="muted small">Earlier questions were summarized and are not shown.</p>
      )}
      <div className="turns">
        {turns.map((t) => (
          <PartBoundary key={t.key} label="This answer">
            <TurnView turn={t} settings={settings} onPageSizeChange={onPageSizeChange} view={view} />
          </PartBoundary>
        ))}
      </div>
    </section>
  );
}

export function SharedConversationPage({
  apiUrl,
  auth,
  shareId,
  settings,
  onPageSizeChange,
  view,
  onOpenThread,
}: Props) {
  const { api, loaded } = useShared(apiUrl, auth, shareId);
  const state = loaded.data;
  if (!state) {
    return (
      <section className="shared" aria-label="Shared conversation">
        <p className="muted">Loading the shared conversation…</p>
      </section>
    );
  }
  if (state.notFound) return <NotFound onHome={() => onOpenThread(null)} />;
  if (!state.conversation) {
    return (
      <section className="shared" aria-label="Shared conversation">
        <p role="alert" className="error">
          {state.error}
        </p>
        <button type="button" onClick={() => void loaded.reload()}>
          Try again
        </button>
      </section>
    );
  }
  return (
    <Conversation
      conversation={state.conversation}
      settings={settings}
      onPageSizeChange={onPageSizeChange}
      view={view}
      onContinue={async () => onOpenThread((await api.continue(shareId)).thread_id)}
    />
  );
}
