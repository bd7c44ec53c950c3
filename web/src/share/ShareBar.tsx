/**
 * The open conversation's **Share** control: make a link members can open read-only, copy it, and
 * list and revoke the conversation's links. Who may open one is the server's decision (their data
 * scope must cover everything the conversation used; docs/access.md#shared-conversations).
 */
import { useCallback, useMemo, useState } from "react";
import type { Auth } from "firebase/auth";
import type { ShareLink } from "@quarry/functions/contract";
import { useAction, useLoad } from "../admin/useLoad";
import { sharesApi, type SharesApi } from "./api";
import "./share.css";

/** The link as a person pastes it: this page's origin and the link's path. */
const fullUrl = (link: ShareLink) => `${window.location.origin}${link.url}`;

function LinkRow({ link, onRevoke }: { link: ShareLink; onRevoke(): Promise<unknown> }) {
  const url = fullUrl(link);
  const [copied, setCopied] = useState<"yes" | "no" | null>(null);
  const [error, busy, run] = useAction();
  const copy = () =>
    navigator.clipboard.writeText(url).then(
      () => setCopied("yes"),
      () => setCopied("no"),
    );
  return (
    <li className="share-link" data-share={link.id}>
      <input
        readOnly
        value={url}
        aria-label="Share link"
        onFocus={(e) => e.currentTarget.select()}
        size={Math.min(url.length, 60)}
      />
      <button type="button" onClick={() => void copy()}>
        {copied === "yes" ? "Copied" : "Copy link"}
      </button>
      <button
        type="button"
        className="danger"
        disabled={busy}
        aria-label={`Revoke the link made ${new Date(link.createdAt).toLocaleString()}`}
        onClick={() => void run(onRevoke)}
      >
        Revoke
      </button>
      <span className="small muted">made {new Date(link.createdAt).toLocaleString()}</span>
      {copied === "no" && (
        <p role="alert" className="error small">
          The browser did not allow copying: select the link and copy it yourself.
        </p>
      )}
      {error && (
        <p role="alert" className="error small">
          {error}
        </p>
      )}
    </li>
  );
}

function SharePanel({ api, threadId }: { api: SharesApi; threadId: string }) {
  const load = useCallback(() => api.list(threadId), [api, threadId]);
  const links = useLoad(load);
  const [error, busy, run] = useAction();
  const create = () =>
    run(async () => {
      await api.create(threadId);
      await links.reload();
    });
  return (
    <section id="share-panel" className="share-panel" aria-label="Share this conversation">
      <p className="small muted">
        A link opens this conversation read-only — questions, queries, rows and answers — for members whose
        data access covers every table it used; to anyone else it is not found. They can continue it in a
        conversation of their own.
      </p>
      <button type="button" className="primary" disabled={busy} onClick={() => void create()}>
        Create link
      </button>
      {(error ?? links.error) && (
        <p role="alert" className="error small">
          {error ?? links.error}
        </p>
      )}
      {links.data && links.data.shares.length === 0 && <p className="small muted">No links yet.</p>}
      {!!links.data?.shares.length && (
        <ul className="share-links" aria-label="Links to this conversation">
          {links.data.shares.map((l) => (
            <LinkRow
              key={l.id}
              link={l}
              onRevoke={async () => {
                await api.revoke(threadId, l.id);
                await links.reload();
              }}
            />
          ))}
        </ul>
      )}
    </section>
  );
}

/** Above an open conversation: Share, opening the panel of its links. */
export function ShareBar({ apiUrl, auth, threadId }: { apiUrl: string; auth: Auth; threadId: string }) {
  const api = useMemo(() => sharesApi(apiUrl, auth), [apiUrl, auth]);
  const [open, setOpen] = useState(false);
  return (
    <div className="share-bar">
      <button
        type="button"
        aria-expanded={open}
        aria-controls="share-panel"
        onClick={() => setOpen((o) => !o)}
      >
        Share
      </button>
      {open && <SharePanel api={api} threadId={threadId} />}
    </div>
  );
}
