/** The signed-in page: header, thread list (a drawer on phones) and the conversation. */
import { useCallback, useEffect, useMemo, useState } from "react";
import { signOut, type User } from "firebase/auth";
import { createApiClient, sendFeedback } from "./api/client";
import { isLocal, type ClientConfig } from "./config";
import { SetupCard } from "./setup/SetupCard";
import type { FirebaseHandles } from "./firebase";
import { Chat } from "./chat/Chat";
import { useChat } from "./chat/useChat";
import { useThreadRoute } from "./route";
import { useSettings, type Settings } from "./settings/useSettings";
import { ThreadList } from "./threads/ThreadList";
import { useThreads } from "./threads/useThreads";
import { errorInWords } from "./data/format";

interface Props {
  cfg: ClientConfig;
  fb: FirebaseHandles;
  user: User;
}

export function Workspace({ cfg, fb, user }: Props) {
  const client = useMemo(() => createApiClient(cfg.apiUrl, fb.auth), [cfg.apiUrl, fb.auth]);
  const [threadId, go] = useThreadRoute();
  const [drawer, setDrawer] = useState(false);
  const { threads, error, refresh } = useThreads(fb.db, client, user.uid);
  const { settings, update } = useSettings(fb.db, user.uid);

  const onThreadCreated = useCallback((id: string) => go(id), [go]);
  const onRunEnded = useCallback(() => void refresh(), [refresh]);
  const chat = useChat({ client, threadId, onThreadCreated, onRunEnded });

  useEffect(() => {
    const theme =
      settings.theme === "system"
        ? matchMedia("(prefers-color-scheme: dark)").matches
          ? "dark"
          : "light"
        : settings.theme;
    document.documentElement.dataset.theme = theme;
  }, [settings.theme]);

  const setPref = (patch: Partial<Settings>) => void update(patch).catch(() => undefined);

  const wrap = async (fn: () => Promise<unknown>) => {
    try {
      await fn();
    } catch (e) {
      throw new Error(errorInWords(e), { cause: e });
    }
  };

  return (
    <div className="app">
      <header className="topbar">
        <button
          type="button"
          className="icon menu"
          aria-label="Conversations"
          aria-expanded={drawer}
          aria-controls="sidebar"
          onClick={() => setDrawer(!drawer)}
        >
          ☰
        </button>
        <h1>Quarry</h1>
        <div className="prefs">
          <label>
            <span className="sr-only">Theme</span>
            <select
              value={settings.theme}
              onChange={(e) => setPref({ theme: e.target.value as Settings["theme"] })}
              aria-label="Theme"
            >
              <option value="system">System theme</option>
              <option value="light">Light</option>
              <option value="dark">Dark</option>
            </select>
          </label>
          <label>
            <span className="sr-only">Default chart</span>
            <select
              value={settings.chartType}
              onChange={(e) => setPref({ chartType: e.target.value as Settings["chartType"] })}
              aria-label="Default chart"
            >
              <option value="auto">Chart: automatic</option>
              <option value="bar">Chart: bar</option>
              <option value="line">Chart: line</option>
              <option value="scatter">Chart: scatter</option>
            </select>
          </label>
        </div>
        {cfg.model?.ready && (
          <span className="model small muted" title="The AI model answering">
            {cfg.model.providerName} · {cfg.model.model}
          </span>
        )}
        <span className="user small" title={user.email ?? user.uid}>
          {user.email ?? "Signed in"}
        </span>
        <button
          type="button"
          onClick={() => {
            // The next person to sign in on this tab must not land in this user's thread.
            window.history.replaceState(null, "", "/");
            void signOut(fb.auth);
          }}
        >
          Sign out
        </button>
      </header>
      <div className="main">
        <aside id="sidebar" className={drawer ? "sidebar open" : "sidebar"}>
          <ThreadList
            threads={threads}
            currentId={threadId}
            error={error}
            onNew={() => {
              go(null);
              setDrawer(false);
            }}
            onSelect={(id) => {
              go(id);
              setDrawer(false);
            }}
            onRename={(id, title) =>
              wrap(async () => {
                await client.threads.update(id, { metadata: { title } });
                await refresh();
              })
            }
            onDelete={(id) =>
              wrap(async () => {
                await client.threads.delete(id);
                if (id === threadId) go(null, true);
                await refresh();
              })
            }
          />
        </aside>
        {cfg.model && !cfg.model.ready ? (
          <SetupCard model={cfg.model} local={isLocal(cfg)} />
        ) : (
          <Chat
            chat={chat}
            settings={settings}
            onPageSizeChange={(n) => setPref({ pageSize: n as Settings["pageSize"] })}
            onFeedback={
              threadId
                ? (questionId, score, note) =>
                    sendFeedback(cfg.apiUrl, fb.auth, threadId, {
                      questionId,
                      score,
                      ...(note ? { note } : {}),
                    })
                : undefined
            }
          />
        )}
      </div>
    </div>
  );
}
