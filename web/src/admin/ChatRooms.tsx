/**
 * Chat rooms bound to a group (`/admin/chat/rooms`, docs/chat.md#shared-rooms): by default an
 * answer in a Slack channel or Google Chat space is private to its asker; a room bound to a group
 * answers everyone there under that group's scope. An admin lists the bindings, binds a room (its
 * name as Quarry writes it, a group from the list) and unbinds one; the API audits both.
 */
import { useCallback, useState, type FormEvent } from "react";
import { CHAT_ROOM, CHAT_ROOM_FORMAT, type ChatRoomBinding } from "@quarry/functions/contract";
import type { AdminApi } from "./api";
import { useAction, useLoad } from "./useLoad";

export function ChatRoomsSection({ api, version }: { api: AdminApi; version: number }) {
  // `version` in the key: a group made or deleted elsewhere on the page shows in the choice.
  const load = useCallback(() => Promise.all([api.chatRooms(), api.groups(), version]), [api, version]);
  const { data, error, loading, reload } = useLoad(load);
  const [rooms, groups] = data ?? [];
  return (
    <section id="chat-rooms" className="admin-section" aria-labelledby="admin-rooms-title">
      <div className="section-head">
        <h3 id="admin-rooms-title">Chat rooms</h3>
        <button type="button" onClick={() => void reload()} disabled={loading}>
          Refresh chat rooms
        </button>
      </div>
      <p className="muted small">
        In a Slack channel or Google Chat space, an answer is private to whoever asked. Bind a room to a group
        and answers there run under that group&rsquo;s datasets, for everyone in the room.
      </p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {groups && <BindForm api={api} groups={groups.groups.map((g) => g.name)} onDone={reload} />}
      {rooms && rooms.rooms.length === 0 && <p className="muted">No room is bound to a group.</p>}
      {rooms && rooms.rooms.length > 0 && (
        <ul className="members" aria-label="Rooms bound to a group">
          {rooms.rooms.map((r) => (
            <RoomRow key={r.room} api={api} binding={r} onDone={reload} />
          ))}
        </ul>
      )}
    </section>
  );
}

function BindForm({ api, groups, onDone }: { api: AdminApi; groups: string[]; onDone: () => Promise<void> }) {
  const [room, setRoom] = useState("");
  const [group, setGroup] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const [error, busy, run] = useAction();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const name = room.trim();
    if (!CHAT_ROOM.test(name)) return setProblem(`A room is written ${CHAT_ROOM_FORMAT}.`);
    if (!group) return setProblem("Choose the group whose datasets answers there use.");
    setProblem(null);
    if (await run(() => api.bindRoom(name, group))) {
      setRoom("");
      await onDone();
    }
  };
  if (!groups.length) return <p className="muted">Create a group first: a room is bound to one.</p>;
  return (
    <form
      className="admin-form"
      onSubmit={(e) => void submit(e)}
      aria-label="Bind a room to a group"
      noValidate
    >
      <label htmlFor="bind-room">Room</label>
      <input
        id="bind-room"
        placeholder="slack:T0123:C0456 or google_chat:spaces/AAAA…"
        value={room}
        onChange={(e) => setRoom(e.target.value)}
      />
      <label htmlFor="bind-group">Group</label>
      <select id="bind-group" value={group} onChange={(e) => setGroup(e.target.value)}>
        <option value="">Choose a group</option>
        {groups.map((g) => (
          <option key={g} value={g}>
            {g}
          </option>
        ))}
      </select>
      <button type="submit" className="primary" disabled={busy}>
        Bind room
      </button>
      {(problem ?? error) && (
        <p role="alert" className="error">
          {problem ?? error}
        </p>
      )}
    </form>
  );
}

function RoomRow({
  api,
  binding,
  onDone,
}: {
  api: AdminApi;
  binding: ChatRoomBinding;
  onDone: () => Promise<void>;
}) {
  const [error, busy, run] = useAction();
  const unbind = async () => {
    if (!window.confirm(`Unbind ${binding.room}? Answers there become private to each asker again.`)) return;
    if (await run(() => api.unbindRoom(binding.room))) await onDone();
  };
  return (
    <li className="member" data-room={binding.room}>
      <div className="member-head">
        <span>
          <code>{binding.room}</code> answers under <strong>{binding.group}</strong>
        </span>
        <button type="button" className="danger" disabled={busy} onClick={() => void unbind()}>
          Unbind {binding.room}
        </button>
      </div>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </li>
  );
}
