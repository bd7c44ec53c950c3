/**
 * The "Schedule…" dialog's fields: when it runs (cadence, days, day of the month, time, time zone)
 * and the optional alert on one of the answer's columns. Each control is labelled by its name
 * alone and described by its problem, when the form has one for it.
 */
import { useId, useMemo, type ReactNode } from "react";
import { ALERT_OPS, SCHEDULE_MAX_MONTH_DAY, SCHEDULE_WEEKDAYS } from "@quarry/functions/contract";
import type { ScheduleForm } from "./form";

export interface FieldsProps {
  form: ScheduleForm;
  set(patch: Partial<ScheduleForm>): void;
  problem(field: keyof ScheduleForm): string | undefined;
}

const DAY_LABELS = { mon: "Mon", tue: "Tue", wed: "Wed", thu: "Thu", fri: "Fri", sat: "Sat", sun: "Sun" };

const MONTH_DAYS: [string, string][] = [
  ...Array.from({ length: SCHEDULE_MAX_MONTH_DAY }, (_, i): [string, string] => [
    String(i + 1),
    String(i + 1),
  ]),
  ["last", "Last day"],
];

const ALERTS: [ScheduleForm["alert"], string][] = [
  ["none", "Never: just keep the answers"],
  ["threshold", "When a column crosses a threshold"],
  ["change", "When a column changes by a percentage"],
  ["rows-any", "When the query returns any row"],
  ["rows-none", "When the query returns no row"],
];

/** A labelled control and its problem, if any. */
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

/** A text box bound to one field of the form. */
export function TextField(
  p: FieldsProps & {
    field: "name" | "time" | "value" | "percent" | "webhook" | "room" | "timeZone" | "column";
    label: string;
  } & {
    type?: string;
    placeholder?: string;
    list?: string;
    autoFocus?: boolean;
  },
) {
  return (
    <Field label={p.label} problem={p.problem(p.field)}>
      {(id, describedBy) => (
        <input
          id={id}
          aria-describedby={describedBy}
          type={p.type ?? "text"}
          list={p.list}
          autoFocus={p.autoFocus}
          placeholder={p.placeholder}
          inputMode={p.field === "value" || p.field === "percent" ? "decimal" : undefined}
          value={p.form[p.field]}
          onChange={(e) => p.set({ [p.field]: e.target.value })}
        />
      )}
    </Field>
  );
}

/** A select bound to one field of the form. */
function SelectField<K extends "cadence" | "monthDay" | "alert" | "column" | "op" | "direction" | "row">(
  p: FieldsProps & { field: K; label: string; options: readonly (readonly [string, string])[] },
) {
  return (
    <Field label={p.label} problem={p.problem(p.field)}>
      {(id, describedBy) => (
        <select
          id={id}
          aria-describedby={describedBy}
          value={p.form[p.field]}
          onChange={(e) => p.set({ [p.field]: e.target.value } as Partial<ScheduleForm>)}
        >
          {p.options.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

function zones(): string[] {
  const f = (Intl as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf;
  return f ? f("timeZone") : [];
}

function Days({ form, set, problem }: FieldsProps) {
  return (
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
  );
}

/** Daily / weekly on ticked days / monthly on a day, at a time in a time zone. */
export function CadenceFields(p: FieldsProps) {
  const zoneList = useId();
  const allZones = useMemo(zones, []);
  const cadences = [
    ["daily", "Daily"],
    ["weekly", "Weekly"],
    ["monthly", "Monthly"],
  ] as const;
  return (
    <fieldset>
      <legend>When</legend>
      <SelectField {...p} field="cadence" label="Repeat" options={cadences} />
      {p.form.cadence === "weekly" && <Days {...p} />}
      {p.form.cadence === "monthly" && (
        <SelectField {...p} field="monthDay" label="Day of the month" options={MONTH_DAYS} />
      )}
      <TextField {...p} field="time" label="Time" type="time" />
      <TextField {...p} field="timeZone" label="Time zone" list={zoneList} />
      <datalist id={zoneList}>
        {allZones.map((z) => (
          <option key={z} value={z} />
        ))}
      </datalist>
    </fieldset>
  );
}

/** Which rows a threshold is checked on. */
const ROWS = [
  ["any", "any row"],
  ["all", "every row"],
  ["first", "the first row"],
] as const;

/** The optional alert: a threshold or a change on one of the answer's columns, or any row / no row. */
export function AlertFields(p: FieldsProps & { columns: string[] }) {
  const onColumn = p.form.alert === "threshold" || p.form.alert === "change";
  const directions = [
    ["down", "Down"],
    ["up", "Up"],
    ["either", "Either way"],
  ] as const;
  return (
    <fieldset>
      <legend>Alert (optional)</legend>
      <SelectField {...p} field="alert" label="Tell me" options={ALERTS} />
      {onColumn &&
        (p.columns.length ? (
          <SelectField {...p} field="column" label="Column" options={p.columns.map((c) => [c, c])} />
        ) : (
          <TextField {...p} field="column" label="Column" />
        ))}
      {p.form.alert === "threshold" && (
        <div className="row">
          <SelectField {...p} field="op" label="Is" options={ALERT_OPS.map((op) => [op, op])} />
          <TextField {...p} field="value" label="Threshold" />
          <SelectField {...p} field="row" label="In" options={ROWS} />
        </div>
      )}
      {p.form.alert === "change" && (
        <div className="row">
          <SelectField {...p} field="direction" label="Direction" options={directions} />
          <TextField {...p} field="percent" label="By at least (%)" />
        </div>
      )}
    </fieldset>
  );
}
