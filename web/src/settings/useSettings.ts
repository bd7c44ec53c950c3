/**
 * The user's preferences in `settings/{uid}` (fields validated by firestore.rules): theme, default
 * chart, table page size. Defaults apply until the document loads, or when Firestore is unreachable.
 */
import { useCallback, useEffect, useState } from "react";
import { doc, onSnapshot, serverTimestamp, setDoc, type Firestore } from "firebase/firestore";

export interface Settings {
  theme: "system" | "light" | "dark";
  chartType: "auto" | "bar" | "line" | "scatter";
  pageSize: 10 | 25 | 50 | 100;
}

const DEFAULT_SETTINGS: Settings = { theme: "system", chartType: "auto", pageSize: 10 };
export const PAGE_SIZES: Settings["pageSize"][] = [10, 25, 50, 100];

function clean(data: Record<string, unknown> | undefined): Settings {
  const d = data ?? {};
  return {
    theme: ["system", "light", "dark"].includes(d.theme as string)
      ? (d.theme as Settings["theme"])
      : "system",
    chartType: ["auto", "bar", "line", "scatter"].includes(d.chartType as string)
      ? (d.chartType as Settings["chartType"])
      : "auto",
    pageSize: PAGE_SIZES.includes(d.pageSize as Settings["pageSize"])
      ? (d.pageSize as Settings["pageSize"])
      : 10,
  };
}

export function useSettings(db: Firestore, uid: string) {
  const [settings, setSettings] = useState<Settings>(DEFAULT_SETTINGS);
  useEffect(
    () =>
      onSnapshot(
        doc(db, "settings", uid),
        (snap) => setSettings(clean(snap.data())),
        () => undefined,
      ),
    [db, uid],
  );
  const update = useCallback(
    async (patch: Partial<Settings>) => {
      setSettings((s) => ({ ...s, ...patch }));
      await setDoc(doc(db, "settings", uid), { ...patch, updatedAt: serverTimestamp() }, { merge: true });
    },
    [db, uid],
  );
  return { settings, update };
}
