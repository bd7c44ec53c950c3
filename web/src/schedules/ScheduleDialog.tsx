/**
 * "Schedule…" beside an answer: a small dialog to save its question and SQL with a cadence, an
 * optional alert on the answer's columns and an optional chat webhook (`POST /schedules`). The
 * server's refusals (a 400 names the field) are shown in its words inside the dialog.
 */
import { useId, useMemo, useState, type FormEvent, type ReactNode } from "react";
import {
  ALERT_OPS,
  SCHEDULE_MAX_MONTH_DAY,
  SCHEDULE_WEEKDAYS,
  type NewScheduleBody,
  type ScheduleView,
} from "@quarry/functions/contract";
import { errorInWords } from "../data/format";
import { defaultForm, formProblems, scheduleBody, type ScheduleForm, type ScheduleSource } from "./form";
import { cadenceInWords } from "./words";

interface Props {
  source: ScheduleSource;
  create(body: NewScheduleBody): Promise<ScheduleView>;
  onClose(): void;
  /** Opens the schedules page. */
  onOpenSchedules(): void;
}

const DAY_LABELS = { mon: "Mon", tue: "Tue", wed: "Wed", thu: "Thu", fri: "Fri", sat: "Sat", sun: "Sun" };

/** The browser's IANA time zone (the form's default). */
function browserZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

function zones(): string[] {
  const f = (Intl as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf;
  return f ? f("timeZone") : [];
}

/** A labelled control (the label names the control alone, not its options) and its problem, if any. */
function Field(p: {
  label: string;
  problem?: string;
  children: (id: string, describedBy?: string) => ReactNode;
}) {
  const id = useId();
  const problemId = `${id}-problem`;
  return (
    <div className="field">
      <label htmlFor={id}>{p.label}</label>
      {p.children(id, p.problem ? problemId : undefined)}
      {p.problem && (
        <span id={problemId} className="error small">
          {p.problem}
        </span>
      )}
    </div>
  );
}

export function ScheduleDialog({ source, create, onClose, onOpenSchedules }: Props) {
  const [form, setForm] = useState<ScheduleForm>(() => defaultForm(source, browserZone()));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState<ScheduleView | null>(null);
  const [tried, setTried] = useState(false);
  const titleId = useId();
  const zoneList = useId();
  const allZones = useMemo(zones, []);
  const problems = formProblems(form, source.columns);
  const problem = (field: keyof ScheduleForm) =>
    tried ? problems.find((p) => p.field === field)?.message : undefined;
  const set = (patch: Partial<ScheduleForm>) => setForm((f) => ({ ...f, ...patch }));

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTried(true);
    if (problems.length) return;
    setBusy(true);
    setError(null);
    try {
      setSaved(await create(scheduleBody(form, source)));
    } catch (err) {
      setError(errorInWords(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="dialog-backdrop">
      <div className="dialog" role="dialog" aria-modal="true" aria-labelledby={titleId}>
        <h2 id={titleId}>Schedule this question</h2>
        {saved ? (
          <div role="status">
            <p>
              Saved: <strong>{saved.name}</strong> — {cadenceInWords(saved.schedule)}.
            </p>
            <p className="small muted">
              Next run: {saved.nextRunAt ? new Date(saved.nextRunAt).toLocaleString() : "—"}
            </p>
            <div className="actions">
              <button type="button" onClick={onOpenSchedules}>
                Open my schedules
              </button>
              <button type="button" className="primary" onClick={onClose}>
                Close
              </button>
            </div>
          </div>
        ) : (
          <form onSubmit={(e) => void submit(e)} noValidate>
            <Field label="Name" problem={problem("name")}>
              {(id, describedBy) => (
                <input
                  id={id}
                  aria-describedby={describedBy}
                  value={form.name}
                  maxLength={100}
                  onChange={(e) => set({ name: e.target.value })}
                />
              )}
            </Field>
            <CadenceFields form={form} set={set} problem={problem} zoneList={zoneList} zones={allZones} />
            <AlertFields form={form} set={set} problem={problem} columns={source.columns} />
            <Field label="Chat webhook (optional, https)" problem={problem("webhook")}>
              {(id, describedBy) => (
                <input
                  id={id}
                  aria-describedby={describedBy}
                  type="url"
                  placeholder="https://chat.googleapis.com/… or https://hooks.slack.com/…"
                  value={form.webhook}
                  onChange={(e) => set({ webhook: e.target.value })}
                />
              )}
            </Field>
            {error && (
              <p className="error" role="alert">
                {error}
              </p>
            )}
            <div className="actions">
              <button type="button" onClick={onClose}>
                Cancel
              </button>
              <button type="submit" className="primary" disabled={busy}>
                {busy ? "Saving…" : "Save schedule"}
              </button>
            </div>
          </form>
        )}
      </div>
    </div>
  );
}

interface PartProps {
  form: ScheduleForm;
  set(patch: Partial<ScheduleForm>): void;
  problem(field: keyof ScheduleForm): string | undefined;
}

function CadenceFields({
  form,
  set,
  problem,
  zoneList,
  zones,
}: PartProps & { zoneList: string; zones: string[] }) {
  return (
    <fieldset>
      <legend>When</legend>
      <Field label="Repeat">
        {(id, describedBy) => (
          <select
            id={id}
            aria-describedby={describedBy}
            value={form.cadence}
            onChange={(e) => set({ cadence: e.target.value as ScheduleForm["cadence"] })}
          >
            <option value="daily">Daily</option>
            <option value="weekly">Weekly</option>
            <option value="monthly">Monthly</option>
          </select>
        )}
      </Field>
      {form.cadence === "weekly" && (
        <div className="days" role="group" aria-label="Days of the week">
          {SCHEDULE_WEEKDAYS.map((d) => (
            <label key={d} className="day">
              <input
                type="checkbox"
                checked={form.days.includes(d)}
                onChange={(e) =>
                  set({ days: e.target.checked ? [...form.days, d] : form.days.filter((x) => x !== d) })
                }
              />
              {DAY_LABELS[d]}
            </label>
          ))}
          {problem("days") && <span className="error small">{problem("days")}</span>}
        </div>
      )}
      {form.cadence === "monthly" && (
        <Field label="Day of the month">
          {(id, describedBy) => (
            <select
              id={id}
              aria-describedby={describedBy}
              value={form.monthDay}
              onChange={(e) => set({ monthDay: e.target.value })}
            >
              {Array.from({ length: SCHEDULE_MAX_MONTH_DAY }, (_, i) => String(i + 1)).map((d) => (
                <option key={d} value={d}>
                  {d}
                </option>
              ))}
              <option value="last">Last day</option>
            </select>
          )}
        </Field>
      )}
      <Field label="Time" problem={problem("time")}>
        {(id, describedBy) => (
          <input
            id={id}
            aria-describedby={describedBy}
            type="time"
            value={form.time}
            onChange={(e) => set({ time: e.target.value })}
          />
        )}
      </Field>
      <Field label="Time zone" problem={problem("timeZone")}>
        {(id, describedBy) => (
          <>
            <input
              id={id}
              aria-describedby={describedBy}
              list={zoneList}
              value={form.timeZone}
              onChange={(e) => set({ timeZone: e.target.value })}
            />
            <datalist id={zoneList}>
              {zones.map((z) => (
                <option key={z} value={z} />
              ))}
            </datalist>
          </>
        )}
      </Field>
    </fieldset>
  );
}

function AlertFields({ form, set, problem, columns }: PartProps & { columns: string[] }) {
  const onColumn = form.alert === "threshold" || form.alert === "change";
  return (
    <fieldset>
      <legend>Alert (optional)</legend>
      <Field label="Tell me">
        {(id, describedBy) => (
          <select
            id={id}
            aria-describedby={describedBy}
            value={form.alert}
            onChange={(e) => set({ alert: e.target.value as ScheduleForm["alert"] })}
          >
            <option value="none">Never: just keep the answers</option>
            <option value="threshold">When a column crosses a threshold</option>
            <option value="change">When a column changes by a percentage</option>
            <option value="rows-any">When the query returns any row</option>
            <option value="rows-none">When the query returns no row</option>
          </select>
        )}
      </Field>
      {onColumn && (
        <Field label="Column" problem={problem("column")}>
          {(id, describedBy) => (
            <select
              id={id}
              aria-describedby={describedBy}
              value={form.column}
              onChange={(e) => set({ column: e.target.value })}
            >
              {columns.map((c) => (
                <option key={c} value={c}>
                  {c}
                </option>
              ))}
            </select>
          )}
        </Field>
      )}
      {form.alert === "threshold" && (
        <div className="row">
          <Field label="Is">
            {(id, describedBy) => (
              <select
                id={id}
                aria-describedby={describedBy}
                value={form.op}
                onChange={(e) => set({ op: e.target.value as ScheduleForm["op"] })}
              >
                {ALERT_OPS.map((op) => (
                  <option key={op} value={op}>
                    {op}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Threshold" problem={problem("value")}>
            {(id, describedBy) => (
              <input
                id={id}
                aria-describedby={describedBy}
                inputMode="decimal"
                value={form.value}
                onChange={(e) => set({ value: e.target.value })}
              />
            )}
          </Field>
        </div>
      )}
      {form.alert === "change" && (
        <div className="row">
          <Field label="Direction">
            {(id, describedBy) => (
              <select
                id={id}
                aria-describedby={describedBy}
                value={form.direction}
                onChange={(e) => set({ direction: e.target.value as ScheduleForm["direction"] })}
              >
                <option value="down">Down</option>
                <option value="up">Up</option>
                <option value="either">Either way</option>
              </select>
            )}
          </Field>
          <Field label="By at least (%)" problem={problem("percent")}>
            {(id, describedBy) => (
              <input
                id={id}
                aria-describedby={describedBy}
                inputMode="decimal"
                value={form.percent}
                onChange={(e) => set({ percent: e.target.value })}
              />
            )}
          </Field>
        </div>
      )}
    </fieldset>
  );
}
