/**
 * "My schedules" (`/schedules`): the person's saved questions — when they run, what the last run
 * did, failures and pauses — with change (the "Schedule…" dialog, filled in), pause/resume, run
 * now, delete and a link to the conversation
 * where the answers arrive. "Run now" queues the run; the page then asks for the schedule again
 * every few seconds until its last run changes, so the outcome shows without a reload.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { Auth } from "firebase/auth";
import type { ScheduleView } from "@quarry/functions/contract";
import { useAction, useLoad } from "../admin/useLoad";
import { schedulesApi, type SchedulesApi } from "./api";
import { formOfSchedule, scheduleChanges, sourceOfSchedule } from "./form";
import { ScheduleDialog } from "./ScheduleDialog";
import { alertInWords, cadenceInWords } from "./words";

interface Props {
  apiUrl: string;
  auth: Auth;
  onOpenThread(threadId: string): void;
}

/** How often, and how many times, the page asks for a schedule that was run now. */
const WATCH_EVERY_MS = 2_000;
const WATCH_TRIES = 90;

const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : "—");

/** Polls a schedule after "Run now" until its last run is a new one; then `onDone`. */
function useRunWatch(api: SchedulesApi, onDone: () => void) {
  const [watching, setWatching] = useState<Record<string, true>>({});
  const timers = useRef(new Set<ReturnType<typeof setTimeout>>());
  useEffect(() => () => timers.current.forEach(clearTimeout), []);
  const watch = useCallback(
    (id: string, before: string | null) => {
      setWatching((w) => ({ ...w, [id]: true }));
      const stop = () =>
        setWatching((w) => {
          const { [id]: _gone, ...rest } = w;
          return rest;
        });
      const tick = (left: number) => {
        const t = setTimeout(() => {
          timers.current.delete(t);
          api.get(id).then(
            (s) => {
              if ((s.lastRun?.at ?? null) !== before || left <= 1) {
                stop();
                onDone();
              } else tick(left - 1);
            },
            () => {
              stop();
              onDone();
            },
          );
        }, WATCH_EVERY_MS);
        timers.current.add(t);
      };
      tick(WATCH_TRIES);
    },
    [api, onDone],
  );
  return { watching, watch };
}

export function SchedulesPage({ apiUrl, auth, onOpenThread }: Props) {
  const api = useMemo(() => schedulesApi(apiUrl, auth), [apiUrl, auth]);
  const load = useCallback(() => api.list(), [api]);
  const { data, error, loading, reload } = useLoad(load);
  const refresh = useCallback(() => void reload(), [reload]);
  const { watching, watch } = useRunWatch(api, refresh);
  const [editing, setEditing] = useState<ScheduleView | null>(null);
  const list = data?.schedules;
  return (
    <main className="admin schedules" aria-labelledby="schedules-title">
      <h2 id="schedules-title">My schedules</h2>
      <p className="muted small">
        Questions saved from answers with “Schedule…”. Each run asks the saved SQL again and adds its answer
        to the schedule’s own conversation; a fired alert or a failed run rings the bell.
      </p>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {loading && !list && <p className="muted">Loading…</p>}
      {list && !list.length && (
        <p className="muted">No schedules yet: open an answer and choose “Schedule…”.</p>
      )}
      <ul className="schedule-list">
        {list?.map((s) => (
          <ScheduleItem
            key={s.id}
            s={s}
            api={api}
            running={!!watching[s.id]}
            onRan={() => watch(s.id, s.lastRun?.at ?? null)}
            onChanged={refresh}
            onEdit={() => setEditing(s)}
            onOpenThread={onOpenThread}
          />
        ))}
      </ul>
      {editing && (
        <ScheduleDialog
          source={sourceOfSchedule(editing)}
          initial={formOfSchedule(editing)}
          save={(form) => api.change(editing.id, scheduleChanges(form))}
          onClose={() => {
            setEditing(null);
            refresh();
          }}
        />
      )}
    </main>
  );
}

interface ItemProps {
  s: ScheduleView;
  api: SchedulesApi;
  running: boolean;
  onRan(): void;
  onChanged(): void;
  onEdit(): void;
  onOpenThread(threadId: string): void;
}

function LastRun({ s }: { s: ScheduleView }) {
  const r = s.lastRun;
  if (!r) return <p className="small muted">Not run yet.</p>;
  return (
    <p className="small last-run" data-outcome={r.outcome}>
      Last run {when(r.at)}: <strong>{r.outcome === "ok" ? "answered" : r.outcome}</strong>
      {r.fired ? " · alert fired" : ""} — <span className="summary">{r.summary || r.error}</span>
    </p>
  );
}

function ScheduleItem({ s, api, running, onRan, onChanged, onEdit, onOpenThread }: ItemProps) {
  const [error, busy, act] = useAction();
  const run = async (fn: () => Promise<unknown>, after: () => void = onChanged) => {
    if (await act(fn)) after();
  };
  return (
    <li className="schedule" aria-label={s.name} data-paused={s.paused}>
      <h3>{s.name}</h3>
      <p className="small">
        {cadenceInWords(s.schedule)}
        {s.alert ? ` · alert ${alertInWords(s.alert)}` : ""}
      </p>
      <p className="small">
        {s.paused ? (
          <span className="paused">Paused{s.pausedReason ? `: ${s.pausedReason}` : ""}</span>
        ) : (
          <>Next run: {when(s.nextRunAt)}</>
        )}
      </p>
      <LastRun s={s} />
      {s.failures > 0 && (
        <p className="small error">
          {s.failures} failed run{s.failures === 1 ? "" : "s"} in a row
        </p>
      )}
      {s.deliveryError && <p className="small error">Webhook: {s.deliveryError.message}</p>}
      <div className="actions">
        <button type="button" disabled={busy} onClick={onEdit}>
          Change
        </button>
        <button type="button" disabled={busy} onClick={() => void run(() => api.setPaused(s.id, !s.paused))}>
          {s.paused ? "Resume" : "Pause"}
        </button>
        <button
          type="button"
          disabled={busy || running || s.paused}
          onClick={() => void run(() => api.runNow(s.id), onRan)}
        >
          {running ? "Running…" : "Run now"}
        </button>
        {s.lastRun ? (
          <button type="button" className="link" onClick={() => onOpenThread(s.scheduleThreadId)}>
            Open its conversation
          </button>
        ) : (
          <button type="button" className="link" onClick={() => onOpenThread(s.threadId)}>
            Open the conversation it came from
          </button>
        )}
        <button
          type="button"
          className="danger"
          disabled={busy}
          onClick={() => {
            if (window.confirm(`Delete the schedule "${s.name}"? Its conversation stays.`))
              void run(() => api.remove(s.id));
          }}
        >
          Delete
        </button>
      </div>
      {error && (
        <p className="error small" role="alert">
          {error}
        </p>
      )}
    </li>
  );
}
