/**
 * A person's preferences (`preferences/{uid}`, server-only): today the view the page and the MCP
 * `ask` text use. A person who chose none gets their first group's default (groups by name), else
 * the analyst view.
 */
import type { Firestore } from "firebase-admin/firestore";
import type { Preferences, View } from "../contract/access";
import type { GroupDoc } from "./groups";

const PREFERENCES_COLLECTION = "preferences";

export class PreferenceStore {
  constructor(private readonly db: Firestore) {}

  private ref(uid: string) {
    return this.db.collection(PREFERENCES_COLLECTION).doc(uid);
  }

  /** The person's own choice, if any. */
  async chosen(uid: string): Promise<View | undefined> {
    return ((await this.ref(uid).get()).data() as { view?: View } | undefined)?.view;
  }

  async setView(uid: string, view: View): Promise<void> {
    await this.ref(uid).set({ view, updatedAt: new Date().toISOString() }, { merge: true });
  }
}

/** The view a person gets: their choice, else their first group's default, else analyst. */
export function effectiveView(
  chosen: View | undefined,
  memberGroups: readonly string[],
  groups: readonly GroupDoc[],
): Preferences {
  if (chosen) return { view: chosen, source: "person" };
  const withDefault = groups
    .filter((g) => g.defaultView && memberGroups.includes(g.name))
    .sort((a, b) => a.name.localeCompare(b.name))[0];
  if (withDefault?.defaultView)
    return { view: withDefault.defaultView, source: "group", group: withDefault.name };
  return { view: "analyst", source: "default" };
}
