/** The page's top bar: conversations drawer, preferences, the model, who is signed in (and their role), the bell, schedules, account, admin, sign out. */
import type { ReactNode } from "react";
import type { Role, View } from "@quarry/functions/contract";
import type { ClientConfig } from "./config";
import type { Settings } from "./settings/useSettings";
import { BigQueryControl, type BigQueryConnection } from "./access/BigQueryConnect";
import { MenuIcon } from "./icons/Icons";

interface Props {
  cfg: ClientConfig;
  email: string | null;
  role: Role;
  settings: Settings;
  setPref: (patch: Partial<Settings>) => void;
  /** How answers are shown (kept by the server: GET|PATCH /me/preferences). */
  view: View;
  onView: (view: View) => void;
  drawer: boolean;
  onDrawer: (open: boolean) => void;
  adminOpen: boolean;
  onAdmin: (open: boolean) => void;
  accountOpen: boolean;
  onAccount: (open: boolean) => void;
  schedulesOpen: boolean;
  onSchedules: (open: boolean) => void;
  /** The notifications bell. */
  bell: ReactNode;
  onSignOut: () => void;
  /** User identity mode's Connect / Disconnect BigQuery. */
  bigquery: BigQueryConnection;
}

export function Header(p: Props) {
  return (
    <header className="topbar">
      {!p.adminOpen && !p.accountOpen && !p.schedulesOpen && (
        <button
          type="button"
          className="icon menu"
          aria-label="Conversations"
          aria-expanded={p.drawer}
          aria-controls="sidebar"
          onClick={() => p.onDrawer(!p.drawer)}
        >
          <MenuIcon />
        </button>
      )}
      <h1>Quarry</h1>
      <Prefs settings={p.settings} setPref={p.setPref} view={p.view} onView={p.onView} />
      {p.cfg.model?.ready && (
        <span className="model small muted" title="The AI model answering">
          {p.cfg.model.providerName} · {p.cfg.model.model}
        </span>
      )}
      <span className="user small" title={p.email ?? undefined}>
        {p.email ?? "Signed in"}
      </span>
      <span className="role small" title="Your role in Quarry">
        {p.role}
      </span>
      <BigQueryControl bq={p.bigquery} />
      {p.bell}
      <PageLink path="/schedules" name="Schedules" open={p.schedulesOpen} onOpen={p.onSchedules} />
      <PageLink path="/account" name="Account" open={p.accountOpen} onOpen={p.onAccount} />
      {p.role === "admin" && <PageLink path="/admin" name="Admin" open={p.adminOpen} onOpen={p.onAdmin} />}
      <button type="button" onClick={p.onSignOut}>
        Sign out
      </button>
    </header>
  );
}

/** A link to a page of its own (`/admin`, `/account`, `/schedules`), or back to the chat while it is open. */
function PageLink(p: { path: string; name: string; open: boolean; onOpen: (open: boolean) => void }) {
  return (
    <a
      className="admin-link"
      href={p.open ? "/" : p.path}
      onClick={(e) => {
        e.preventDefault();
        p.onOpen(!p.open);
      }}
    >
      {p.open ? "Back to chat" : p.name}
    </a>
  );
}

function Prefs({ settings, setPref, view, onView }: Pick<Props, "settings" | "setPref" | "view" | "onView">) {
  return (
    <div className="prefs">
      <label>
        <span className="sr-only">View</span>
        <select value={view} onChange={(e) => onView(e.target.value as View)} aria-label="View">
          <option value="analyst">Analyst view</option>
          <option value="business">Business view</option>
        </select>
      </label>
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
  );
}
