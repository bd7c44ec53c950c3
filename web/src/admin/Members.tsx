/**
 * Members: who may use Quarry beyond the allowed domains, their role, their groups and their own
 * quotas. Add by email and role, change a role, tick the groups whose datasets they may see, set or
 * clear per-person quotas (empty = the deployment's default), remove (after a confirmation).
 */
import { useCallback, useState, type FormEvent } from "react";
import { ROLES, type Role } from "@quarry/functions/contract";
import type { Member, MembersAnswer } from "@quarry/functions/contract";
import type { AdminApi } from "./api";
import { MemberGroups } from "./MemberGroups";
import { QuotaEditor } from "./QuotaEditor";
import { useAction, useLoad } from "./useLoad";

interface Props {
  api: AdminApi;
  /** Bumped by any admin change that may alter this list (a group deleted included). */
  version: number;
  onChanged: () => void;
}

export function MembersSection({ api, version, onChanged }: Props) {
  // `version` is a dependency so that another section's change reloads this list.
  const load = useCallback(() => api.members(), [api, version]);
  const { data, error } = useLoad(load);
  const reload = async () => onChanged();
  return (
    <section id="members" className="admin-section" aria-labelledby="members-title">
      <h3 id="members-title">Members</h3>
      {data && <PolicyLine policy={data.policy} />}
      <AddMember api={api} onAdded={reload} />
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {data && data.members.length === 0 && <p className="muted">No one is on the members list yet.</p>}
      {data && data.members.length > 0 && (
        <ul className="member-list" aria-label="Members">
          {data.members.map((m) => (
            <MemberRow key={m.email} api={api} member={m} groups={data.groups} onChanged={reload} />
          ))}
        </ul>
      )}
    </section>
  );
}

function PolicyLine({ policy }: { policy: MembersAnswer["policy"] }) {
  const domains = policy.allowedDomains.join(", ") || "none";
  const admins = policy.admins.join(", ") || "none";
  return (
    <p className="muted small">
      Also members: verified addresses in {domains}. Admins from the settings: {admins}.
    </p>
  );
}

function RoleSelect(props: { label: string; value: Role; onChange: (r: Role) => void; disabled?: boolean }) {
  return (
    <select
      aria-label={props.label}
      value={props.value}
      disabled={props.disabled}
      onChange={(e) => props.onChange(e.target.value as Role)}
    >
      {ROLES.map((r) => (
        <option key={r} value={r}>
          {r}
        </option>
      ))}
    </select>
  );
}

function AddMember({ api, onAdded }: { api: AdminApi; onAdded: () => Promise<void> }) {
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("member");
  const [error, busy, run] = useAction();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (await run(() => api.addMember(email.trim(), role))) {
      setEmail("");
      setRole("member");
      await onAdded();
    }
  };
  return (
    <form className="admin-form" onSubmit={(e) => void submit(e)} aria-label="Add a member">
      <label htmlFor="new-member-email">Email</label>
      <input
        id="new-member-email"
        type="email"
        required
        value={email}
        onChange={(e) => setEmail(e.target.value)}
      />
      <RoleSelect label="Role of the new member" value={role} onChange={setRole} />
      <button type="submit" className="primary" disabled={busy}>
        Add member
      </button>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </form>
  );
}

function MemberRow({
  api,
  member,
  groups,
  onChanged,
}: {
  api: AdminApi;
  member: Member;
  /** The groups defined. */
  groups: string[];
  onChanged: () => Promise<void>;
}) {
  const [error, busy, run] = useAction();
  const act = async (fn: () => Promise<unknown>) => {
    if (await run(fn)) await onChanged();
  };
  const remove = () => {
    if (!window.confirm(`Remove ${member.email} from the members list?`)) return;
    void act(() => api.removeMember(member.email));
  };
  return (
    <li className="member" data-email={member.email}>
      <div className="member-head">
        <strong>{member.email}</strong>
        <RoleSelect
          label={`Role of ${member.email}`}
          value={member.role}
          disabled={busy}
          onChange={(role) => void act(() => api.updateMember(member.email, { role }))}
        />
        <button type="button" className="danger" disabled={busy} onClick={remove}>
          Remove {member.email}
        </button>
      </div>
      <MemberGroups
        member={member}
        groups={groups}
        busy={busy}
        onSave={(next) => act(() => api.updateMember(member.email, { groups: next }))}
      />
      <QuotaEditor
        email={member.email}
        quotas={member.quotas}
        busy={busy}
        onSave={(quotas) => act(() => api.updateMember(member.email, { quotas }))}
      />
      <p className="muted small">
        Added by {member.addedBy} on {member.addedAt.slice(0, 10)}
      </p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </li>
  );
}
