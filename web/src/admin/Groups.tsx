/**
 * Groups: which datasets (`shop`) or single tables (`finance.salaries`) each group's members may
 * see, and the view its members get unless they chose one. Create a group with its datasets, change them, delete it (after a confirmation; its members
 * leave it). A member's groups are set in the Members section. The server checks every entry
 * against the warehouse and says which datasets exist when one is unknown.
 */
import { useCallback, useState, type FormEvent } from "react";
import type { Group, View } from "@quarry/functions/contract";
import type { AdminApi } from "./api";
import { useAction, useLoad } from "./useLoad";

interface Props {
  api: AdminApi;
  /** Bumped by any admin change that may alter this list (a member's groups included). */
  version: number;
  onChanged: () => void;
}

/** "shop, finance.salaries" (commas or spaces) as the entries the API takes. */
function datasetsOf(text: string): string[] {
  return text.split(/[\s,]+/).filter((s) => s !== "");
}

export function GroupsSection({ api, version, onChanged }: Props) {
  // `version` is a dependency so that another section's change reloads this list.
  const load = useCallback(() => api.groups(), [api, version]);
  const { data, error } = useLoad(load);
  return (
    <section id="groups" className="admin-section" aria-labelledby="groups-title">
      <h3 id="groups-title">Groups</h3>
      {data && <RuleLine defined={data.groups.length > 0} />}
      <NewGroupForm api={api} onCreated={onChanged} />
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {data && data.groups.length > 0 && (
        <ul className="member-list" aria-label="Groups">
          {data.groups.map((g) => (
            <GroupRow key={`${g.name} ${g.updatedAt}`} api={api} group={g} onChanged={onChanged} />
          ))}
        </ul>
      )}
    </section>
  );
}

/** What groups do to who sees what, as things stand. */
function RuleLine({ defined }: { defined: boolean }) {
  return defined ? (
    <p className="muted small">
      Members see only the datasets of their groups; a member in no group sees no data. Admins see every
      dataset.
    </p>
  ) : (
    <p className="muted small">
      No groups yet: every member sees every allowed dataset. Once a group exists, members see only their
      groups&apos; datasets, and a member in no group sees none. Admins always see every dataset.
    </p>
  );
}

function NewGroupForm({ api, onCreated }: { api: AdminApi; onCreated: () => void }) {
  const [name, setName] = useState("");
  const [datasets, setDatasets] = useState("");
  const [error, busy, run] = useAction();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (await run(() => api.createGroup({ name: name.trim(), datasets: datasetsOf(datasets) }))) {
      setName("");
      setDatasets("");
      onCreated();
    }
  };
  return (
    <form className="admin-form" onSubmit={(e) => void submit(e)} aria-label="Create a group">
      <label htmlFor="new-group-name">Name</label>
      <input
        id="new-group-name"
        required
        maxLength={40}
        pattern="[A-Za-z0-9][A-Za-z0-9_\-]*"
        title="Letters, digits, - and _, starting with a letter or digit"
        value={name}
        onChange={(e) => setName(e.target.value)}
      />
      <label htmlFor="new-group-datasets">Datasets</label>
      <input
        id="new-group-datasets"
        required
        placeholder="shop, finance.salaries"
        value={datasets}
        onChange={(e) => setDatasets(e.target.value)}
      />
      <button type="submit" className="primary" disabled={busy}>
        Create group
      </button>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </form>
  );
}

function GroupRow({ api, group, onChanged }: { api: AdminApi; group: Group; onChanged: () => void }) {
  const [draft, setDraft] = useState(group.datasets.join(", "));
  const [error, busy, run] = useAction();
  const act = async (fn: () => Promise<unknown>) => {
    if (await run(fn)) onChanged();
  };
  const save = (e: FormEvent) => {
    e.preventDefault();
    void act(() => api.updateGroup(group.name, datasetsOf(draft)));
  };
  const remove = () => {
    const who = group.members.length ? ` Its ${group.members.length} member(s) leave it.` : "";
    if (!window.confirm(`Delete the group ${group.name}?${who}`)) return;
    void act(() => api.removeGroup(group.name));
  };
  return (
    <li className="member" data-group={group.name}>
      <div className="member-head">
        <strong>{group.name}</strong>
        <button type="button" className="danger" disabled={busy} onClick={remove}>
          Delete {group.name}
        </button>
      </div>
      <form className="admin-form" onSubmit={save} aria-label={`Datasets of ${group.name}`}>
        <input
          aria-label={`Datasets of ${group.name}`}
          required
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
        />
        <button type="submit" disabled={busy}>
          Save datasets of {group.name}
        </button>
      </form>
      <label className="small">
        Default view of its members{" "}
        <select
          aria-label={`Default view of ${group.name}`}
          disabled={busy}
          value={group.defaultView ?? ""}
          onChange={(e) =>
            void act(() =>
              api.setGroupView(group.name, e.target.value === "" ? null : (e.target.value as View)),
            )
          }
        >
          <option value="">None (analyst)</option>
          <option value="analyst">Analyst view</option>
          <option value="business">Business view</option>
        </select>
      </label>
      <p className="muted small">
        {group.members.length ? `Members: ${group.members.join(", ")}.` : "No members yet."} Created by{" "}
        {group.createdBy} on {group.createdAt.slice(0, 10)}.
      </p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </li>
  );
}
