/** One member's own quotas: three numbers, each left empty for the deployment's default. */
import { useState, type FormEvent } from "react";
import type { QuotaLimits } from "@quarry/functions/contract";

const FIELDS: { key: keyof QuotaLimits; label: string }[] = [
  { key: "questionsPerMinute", label: "Questions per minute" },
  { key: "bytesPerDay", label: "Bytes per day" },
  { key: "tokensPerDay", label: "Tokens per day" },
];

type Draft = Record<keyof QuotaLimits, string>;

function draftOf(quotas: Partial<QuotaLimits> | undefined): Draft {
  const text = (n: number | undefined) => (n === undefined ? "" : String(n));
  return {
    questionsPerMinute: text(quotas?.questionsPerMinute),
    bytesPerDay: text(quotas?.bytesPerDay),
    tokensPerDay: text(quotas?.tokensPerDay),
  };
}

/** The filled-in fields as numbers; `null` (back to the defaults) when none is. */
function quotasOf(draft: Draft): Partial<QuotaLimits> | null {
  const out: Partial<QuotaLimits> = {};
  for (const { key } of FIELDS) if (draft[key].trim() !== "") out[key] = Number(draft[key]);
  return Object.keys(out).length ? out : null;
}

interface Props {
  email: string;
  quotas: Partial<QuotaLimits> | undefined;
  busy: boolean;
  onSave: (quotas: Partial<QuotaLimits> | null) => Promise<void>;
}

export function QuotaEditor({ email, quotas, busy, onSave }: Props) {
  const [draft, setDraft] = useState(() => draftOf(quotas));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void onSave(quotasOf(draft));
  };
  return (
    <form className="quota-editor" onSubmit={submit} aria-label={`Quotas of ${email}`}>
      {FIELDS.map(({ key, label }) => (
        <label key={key}>
          <span>{label}</span>
          <input
            type="number"
            min={0}
            step={1}
            inputMode="numeric"
            placeholder="default"
            aria-label={`${label} for ${email}`}
            value={draft[key]}
            onChange={(e) => setDraft({ ...draft, [key]: e.target.value })}
          />
        </label>
      ))}
      <button type="submit" disabled={busy}>
        Save quotas for {email}
      </button>
    </form>
  );
}
