/**
 * The admin section (`/admin`): members, groups, usage, the audit log, proposals, imported definitions, schedules and chat rooms, each a section
 * of its own; a change in members or groups reloads both (a member's groups show in each). The API refuses non-admins anyway; a member who comes here by URL is told it is for admins.
 */
import { useMemo, useReducer } from "react";
import type { Auth } from "firebase/auth";
import { PartBoundary } from "../PartBoundary";
import { adminApi } from "./api";
import { GroupsSection } from "./Groups";
import { MembersSection } from "./Members";
import { UsageSection } from "./Usage";
import { AuditSection } from "./Audit";
import { ProposalsSection } from "./Proposals";
import { ImportsSection } from "./Imports";
import { SchedulesSection } from "./Schedules";
import { ChatRoomsSection } from "./ChatRooms";

interface Props {
  apiUrl: string;
  auth: Auth;
  isAdmin: boolean;
}

export function AdminPage({ apiUrl, auth, isAdmin }: Props) {
  const api = useMemo(() => adminApi(apiUrl, auth), [apiUrl, auth]);
  const [version, changed] = useReducer((v: number) => v + 1, 0);
  if (!isAdmin) {
    return (
      <main className="admin">
        <section className="setup-card" role="alert" aria-labelledby="admins-only">
          <h2 id="admins-only">Admins only</h2>
          <p>This part of Quarry is for its administrators. Ask one if you need something changed.</p>
          <a href="/">Back to chat</a>
        </section>
      </main>
    );
  }
  return (
    <main className="admin" aria-labelledby="admin-title">
      <h2 id="admin-title">Administration</h2>
      <nav aria-label="Admin sections" className="admin-nav">
        <a href="#members">Members</a>
        <a href="#groups">Groups</a>
        <a href="#usage">Usage</a>
        <a href="#audit">Audit log</a>
        <a href="#proposals">Proposals</a>
        <a href="#imports">Imported definitions</a>
        <a href="#schedules">Schedules</a>
        <a href="#chat-rooms">Chat rooms</a>
      </nav>
      {/* Each section on its own: one that cannot render leaves the others working. */}
      <PartBoundary label="Members">
        <MembersSection api={api} version={version} onChanged={changed} />
      </PartBoundary>
      <PartBoundary label="Groups">
        <GroupsSection api={api} version={version} onChanged={changed} />
      </PartBoundary>
      <PartBoundary label="Usage">
        <UsageSection api={api} />
      </PartBoundary>
      <PartBoundary label="Audit log">
        <AuditSection api={api} />
      </PartBoundary>
      <PartBoundary label="Proposals">
        <ProposalsSection api={api} />
      </PartBoundary>
      <PartBoundary label="Imported definitions">
        <ImportsSection api={api} />
      </PartBoundary>
      <PartBoundary label="Schedules">
        <SchedulesSection api={api} />
      </PartBoundary>
      <PartBoundary label="Chat rooms">
        <ChatRoomsSection api={api} version={version} />
      </PartBoundary>
    </main>
  );
}
