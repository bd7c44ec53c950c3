/**
 * Every schedule (`GET /admin/schedules`): owner, name, cadence, paused and why, the last run's
 * outcome; an admin pauses or resumes any (`PATCH /admin/schedules/:id`, audited by the API).
 */
import { useCallback } from "react";
import type { ScheduleView } from "@quarry/functions/contract";
import { cadenceInWords } from "../schedules/words";
import type { AdminApi } from "./api";
import { useAction, useLoad } from "./useLoad";

export function SchedulesSection({ api }: { api: AdminApi }) {
  const load = useCallback(() => api.schedules(), [api]);
  const { data, error, loading, reload } = useLoad(load);
  return (
    <section id="schedules" className="admin-section" aria-labelledby="admin-schedules-title">
      <div className="section-head">
        <h3 id="admin-schedules-title">Schedules</h3>
        <button type="button" onClick={() => void reload()} disabled={loading}>
          Refresh schedules
        </button>
      </div>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {data && data.schedules.length === 0 && <p className="muted">Nobody has scheduled a question yet.</p>}
      {data && data.schedules.length > 0 && (
        <div className="table-wrap">
          <table className="admin-table">
            <caption className="sr-only">Every schedule</caption>
            <thead>
              <tr>
                <th scope="col">Owner</th>
                <th scope="col">Name</th>
                <th scope="col">Runs</th>
                <th scope="col">State</th>
                <th scope="col">Last run</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {data.schedules.map((s) => (
                <ScheduleRow key={s.id} api={api} s={s} onDone={reload} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function ScheduleRow({ api, s, onDone }: { api: AdminApi; s: ScheduleView; onDone: () => Promise<void> }) {
  const [error, busy, run] = useAction();
  const toggle = async () => {
    if (await run(() => api.pauseSchedule(s.id, !s.paused))) await onDone();
  };
  return (
    <tr data-schedule-id={s.id}>
      <td>{s.ownerEmail ?? s.owner}</td>
      <td>{s.name}</td>
      <td className="small">{cadenceInWords(s.schedule)}</td>
      <td className="small">
        {s.paused ? `Paused${s.pausedReason ? `: ${s.pausedReason}` : ""}` : "Active"}
      </td>
      <td className="small">
        {s.lastRun
          ? `${s.lastRun.outcome}${s.lastRun.fired ? " (alert fired)" : ""}: ${s.lastRun.summary}`
          : "not run yet"}
      </td>
      <td>
        <button
          type="button"
          disabled={busy}
          onClick={() => void toggle()}
          aria-label={`${s.paused ? "Resume" : "Pause"} ${s.name}`}
        >
          {s.paused ? "Resume" : "Pause"}
        </button>
        {error && (
          <p role="alert" className="error small">
            {error}
          </p>
        )}
      </td>
    </tr>
  );
}
