/** The signed-in page: header, then the admin section (`/admin`), the account page (`/account`), the schedules (`/schedules`), a shared conversation (`/s/<id>`) or the thread list (a drawer on phones) and the conversation. */
import { useCallback, useEffect, useMemo, useState } from "react";
import type { User } from "firebase/auth";
import type { Client } from "@langchain/langgraph-sdk";
import type { Me } from "@quarry/functions/contract";
import { createApiClient, requestVerification, sendFeedback } from "./api/client";
import { usePreferences } from "./settings/usePreferences";
import type { View } from "@quarry/functions/contract";
import { isLocal, type ClientConfig } from "./config";
import { SetupCard } from "./setup/SetupCard";
import type { FirebaseHandles } from "./firebase";
import { Chat } from "./chat/Chat";
import { useChat } from "./chat/useChat";
import {
  useAccountRoute,
  useAdminRoute,
  useConnectRoute,
  useSchedulesRoute,
  useShareRoute,
  useThreadRoute,
} from "./route";
import { ConnectChatPage } from "./chat-link/ConnectChatPage";
import { useSettings, type Settings } from "./settings/useSettings";
import { ThreadList } from "./threads/ThreadList";
import { useThreads } from "./threads/useThreads";
import { useFirstScreen } from "./threads/useFirstScreen";
import { useFiles } from "./files/useFiles";
import { errorInWords } from "./data/format";
import { Header } from "./Header";
import { AdminPage } from "./admin/AdminPage";
import { AccountPage } from "./account/AccountPage";
import { ConnectBigQueryContext, useBigQuery } from "./access/BigQueryConnect";
import { Bell } from "./schedules/Bell";
import { SchedulesPage } from "./schedules/SchedulesPage";
import { useScheduleDialog } from "./schedules/useScheduleDialog";
import { ShareBar } from "./share/ShareBar";
import { SharedConversationPage } from "./share/SharedConversationPage";

interface Props {
  cfg: ClientConfig;
  fb: FirebaseHandles;
  user: User;
  me: Me;
  onSignOut: () => void;
}

function useTheme(theme: Settings["theme"]) {
  useEffect(() => {
    const resolved =
      theme === "system" ? (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light") : theme;
    document.documentElement.dataset.theme = resolved;
  }, [theme]);
}

export function Workspace({ cfg, fb, user, me, onSignOut }: Props) {
  const client = useMemo(() => createApiClient(cfg.apiUrl, fb.auth), [cfg.apiUrl, fb.auth]);
  const [adminOpen, goAdmin] = useAdminRoute();
  const [accountOpen, goAccount] = useAccountRoute();
  const [schedulesOpen, goSchedules] = useSchedulesRoute();
  const [, goThread] = useThreadRoute();
  const shareId = useShareRoute();
  const connectToken = useConnectRoute();
  const [drawer, setDrawer] = useState(false);
  const { settings, update } = useSettings(fb.db, user.uid);
  useTheme(settings.theme);
  const setPref = (patch: Partial<Settings>) => void update(patch).catch(() => undefined);
  const prefs = usePreferences(cfg.apiUrl, fb.auth);
  // An older server's /me says nothing: BigQuery runs as its service account.
  const bigquery = useBigQuery(cfg.apiUrl, fb.auth, me.bigquery ?? { identity: "service" });
  const connect = bigquery.identity.identity === "user" ? bigquery.connect : undefined;

  return (
    <ConnectBigQueryContext.Provider value={connect}>
      <div className="app">
        <Header
          cfg={cfg}
          email={user.email ?? me.email}
          role={me.role}
          settings={settings}
          setPref={setPref}
          view={prefs.view}
          onView={(v) => void prefs.setView(v)}
          drawer={drawer}
          onDrawer={setDrawer}
          adminOpen={adminOpen}
          onAdmin={goAdmin}
          accountOpen={accountOpen}
          onAccount={goAccount}
          schedulesOpen={schedulesOpen}
          onSchedules={goSchedules}
          bell={<Bell db={fb.db} uid={user.uid} onOpenThread={goThread} />}
          onSignOut={onSignOut}
          bigquery={bigquery}
        />
        {connectToken ? (
          <ConnectChatPage apiUrl={cfg.apiUrl} auth={fb.auth} token={connectToken} />
        ) : adminOpen ? (
          <AdminPage apiUrl={cfg.apiUrl} auth={fb.auth} isAdmin={me.role === "admin"} />
        ) : accountOpen ? (
          <AccountPage apiUrl={cfg.apiUrl} auth={fb.auth} />
        ) : schedulesOpen ? (
          <SchedulesPage apiUrl={cfg.apiUrl} auth={fb.auth} onOpenThread={goThread} />
        ) : shareId ? (
          <SharedConversationPage
            key={shareId}
            apiUrl={cfg.apiUrl}
            auth={fb.auth}
            shareId={shareId}
            settings={settings}
            onPageSizeChange={(n) => setPref({ pageSize: n as Settings["pageSize"] })}
            view={prefs.view}
            onOpenThread={goThread}
          />
        ) : (
          <ChatArea
            cfg={cfg}
            fb={fb}
            user={user}
            client={client}
            settings={settings}
            setPref={setPref}
            view={prefs.view}
            drawer={drawer}
            setDrawer={setDrawer}
          />
        )}
      </div>
    </ConnectBigQueryContext.Provider>
  );
}

interface ChatAreaProps {
  cfg: ClientConfig;
  fb: FirebaseHandles;
  user: User;
  client: Client;
  settings: Settings;
  setPref: (patch: Partial<Settings>) => void;
  view: View;
  drawer: boolean;
  setDrawer: (open: boolean) => void;
}

/**
 * The open conversation's files. A file brought into a new conversation creates it: the page knows
 * it is empty, so opening it loads nothing (a load finishing after the first question was asked
 * would wipe that turn from the screen).
 */
function useConversationFiles(
  cfg: ChatAreaProps["cfg"],
  fb: ChatAreaProps["fb"],
  threadId: string | null,
  adopt: (id: string) => void,
  go: (id: string) => void,
) {
  const onThreadCreated = useCallback(
    (id: string) => {
      adopt(id);
      go(id);
    },
    [adopt, go],
  );
  return useFiles({
    apiUrl: cfg.apiUrl,
    auth: fb.auth,
    threadId,
    uploadMaxMb: cfg.limits.uploadMaxMb,
    onThreadCreated,
  });
}

/** Votes on the open conversation's answers (none before it exists). */
function feedbackSender(cfg: ClientConfig, fb: FirebaseHandles, threadId: string | null) {
  if (!threadId) return undefined;
  return (questionId: string, score: 1 | -1, note?: string) =>
    sendFeedback(cfg.apiUrl, fb.auth, threadId, { questionId, score, ...(note ? { note } : {}) });
}

/** The thread list and the open conversation (or the set-up card when there is no model). */
function ChatArea({ cfg, fb, user, client, settings, setPref, view, drawer, setDrawer }: ChatAreaProps) {
  const [threadId, go] = useThreadRoute();
  const { threads, error, refresh } = useThreads(fb.db, client, user.uid);
  const onThreadCreated = useCallback((id: string) => go(id), [go]);
  const onRunEnded = useCallback(() => void refresh(), [refresh]);
  /** Opens a conversation (or a new one) and closes the drawer. */
  const open = (id: string | null) => {
    go(id);
    setDrawer(false);
  };
  const scheduler = useScheduleDialog(cfg.apiUrl, fb.auth);
  const chat = useChat({ client, threadId, onThreadCreated, onRunEnded });
  const firstScreen = useFirstScreen(cfg.apiUrl, fb.auth, !threadId);
  const files = useConversationFiles(cfg, fb, threadId, chat.adopt, go);

  const wrap = async (fn: () => Promise<unknown>) => {
    try {
      await fn();
    } catch (e) {
      throw new Error(errorInWords(e), { cause: e });
    }
  };

  return (
    <div className="main">
      <aside id="sidebar" className={drawer ? "sidebar open" : "sidebar"}>
        <ThreadList
          threads={threads}
          currentId={threadId}
          error={error}
          onNew={() => open(null)}
          onSelect={open}
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
        <div className="conversation">
          {threadId && <ShareBar key={threadId} apiUrl={cfg.apiUrl} auth={fb.auth} threadId={threadId} />}
          <Chat
            chat={chat}
            settings={settings}
            onPageSizeChange={(n) => setPref({ pageSize: n as Settings["pageSize"] })}
            firstScreen={firstScreen}
            files={files}
            attachmentMaxMb={cfg.limits.attachmentMaxMb}
            onSchedule={threadId ? (turn) => scheduler.open(turn, threadId) : undefined}
            view={view}
            onVerify={
              threadId
                ? (questionId) => requestVerification(cfg.apiUrl, fb.auth, threadId, questionId)
                : undefined
            }
            onFeedback={feedbackSender(cfg, fb, threadId)}
          />
        </div>
      )}
      {scheduler.dialog}
    </div>
  );
}
