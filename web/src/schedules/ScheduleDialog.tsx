/**
 * "Schedule…" beside an answer: a small dialog to save its question and SQL with a cadence, an
 * optional alert on the answer's columns and an optional chat webhook (`POST /schedules`); and,
 * from the schedules page, the same dialog to change a saved schedule (`PATCH /schedules/:id`). The
 * server's refusals (a 400 names the field) are shown in its words inside the dialog.
 */
import { useEffect, useId, useState, type FormEvent } from "react";
import type { ScheduleView } from "@quarry/functions/contract";
import { errorInWords } from "../data/format";
import { defaultForm, formProblems, type ScheduleForm, type ScheduleSource } from "./form";
import { AlertFields, CadenceFields, TextField } from "./ScheduleFields";
import { cadenceInWords } from "./words";

interface Props {
  source: ScheduleSource;
  /** A saved schedule's form, to change it; a new one opens with the defaults. */
  initial?: ScheduleForm;
  /** Saves the form (creates the schedule, or changes the saved one). */
  save(form: ScheduleForm): Promise<ScheduleView>;
  onClose(): void;
  /** Opens the schedules page (offered once a new schedule is saved). */
  onOpenSchedules?(): void;
}

/** The browser's IANA time zone (the form's default). */
function browserZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

/** The dialog's answer once saved: what and when, and the way to the schedules page. */
function Saved({
  saved,
  onClose,
  onOpenSchedules,
}: { saved: ScheduleView } & Pick<Props, "onClose" | "onOpenSchedules">) {
  return (
    <div role="status">
      <p>
        Saved: <strong>{saved.name}</strong> — {cadenceInWords(saved.schedule)}.
      </p>
      <p className="small muted">
        Next run: {saved.nextRunAt ? new Date(saved.nextRunAt).toLocaleString() : "—"}
      </p>
      <div className="actions">
        {onOpenSchedules && (
          <button type="button" onClick={onOpenSchedules}>
            Open my schedules
          </button>
        )}
        <button type="button" className="primary" onClick={onClose}>
          Close
        </button>
      </div>
    </div>
  );
}

export function ScheduleDialog({ source, initial, save, onClose, onOpenSchedules }: Props) {
  const [form, setForm] = useState<ScheduleForm>(() => initial ?? defaultForm(source, browserZone()));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState<ScheduleView | null>(null);
  const [tried, setTried] = useState(false);
  const titleId = useId();
  const problems = formProblems(form, source.columns);
  // Problems show once the person has tried to save, not while they are still filling the form in.
  const problem = (field: keyof ScheduleForm) =>
    tried ? problems.find((p) => p.field === field)?.message : undefined;
  const set = (patch: Partial<ScheduleForm>) => setForm((f) => ({ ...f, ...patch }));
  const fields = { form, set, problem };
  // Escape closes the dialog, as it closes the bell's list.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && onClose();
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [onClose]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTried(true);
    if (problems.length) return;
    setBusy(true);
    setError(null);
    try {
      setSaved(await save(form));
    } catch (err) {
      setError(errorInWords(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="dialog-backdrop">
      <div className="dialog" role="dialog" aria-modal="true" aria-labelledby={titleId}>
        <h2 id={titleId}>{initial ? `Change the schedule “${initial.name}”` : "Schedule this question"}</h2>
        {saved ? (
          <Saved saved={saved} onClose={onClose} onOpenSchedules={onOpenSchedules} />
        ) : (
          <form onSubmit={(e) => void submit(e)} noValidate>
            <TextField {...fields} field="name" label="Name" autoFocus />
            <CadenceFields {...fields} />
            <AlertFields {...fields} columns={source.columns} />
            <TextField
              {...fields}
              field="webhook"
              label="Chat webhook (optional, https)"
              type="url"
              placeholder="https://chat.googleapis.com/… or https://hooks.slack.com/…"
            />
            <TextField
              {...fields}
              field="room"
              label="Post as the Quarry app to a chat room (optional)"
              placeholder="slack:T0123:C0456 or google_chat:spaces/AAAA…"
            />
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
                {busy ? "Saving…" : initial ? "Save changes" : "Save schedule"}
              </button>
            </div>
          </form>
        )}
      </div>
    </div>
  );
}
