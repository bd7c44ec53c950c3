/**
 * A member's groups: one checkbox per group defined, saved as soon as one is ticked or cleared, and
 * a line saying what that means for the data this person sees.
 */
import type { Member } from "@quarry/functions/contract";

interface Props {
  member: Member;
  /** The groups defined, sorted. */
  groups: string[];
  busy: boolean;
  onSave: (groups: string[]) => Promise<void>;
}

/** What the member sees, in words, from their role and groups. */
function seesWhat(member: Member, groups: string[]): string {
  if (member.role === "admin") return "An admin sees every dataset, in a group or not.";
  if (groups.length === 0) return "No groups are defined: sees every allowed dataset.";
  return member.groups.length ? "Sees the datasets of these groups." : "In no group: sees no data.";
}

export function MemberGroups({ member, groups, busy, onSave }: Props) {
  const mine = new Set(member.groups);
  const toggle = (group: string, on: boolean) =>
    void onSave(groups.filter((g) => (g === group ? on : mine.has(g))));
  return (
    <fieldset className="member-groups" disabled={busy}>
      <legend>Groups of {member.email}</legend>
      {groups.map((g) => (
        <label key={g}>
          <input type="checkbox" checked={mine.has(g)} onChange={(e) => toggle(g, e.target.checked)} /> {g}
        </label>
      ))}
      <span className="muted small">{seesWhat(member, groups)}</span>
    </fieldset>
  );
}
