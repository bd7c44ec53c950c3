/** "Schedule…" for the conversation: which answer's dialog is open, and the dialog itself. */
import { useCallback, useMemo, useState, type ReactNode } from "react";
import type { Auth } from "firebase/auth";
import type { Turn } from "../chat/model";
import { useSchedulesRoute } from "../route";
import { schedulesApi } from "./api";
import { scheduleBody, type ScheduleSource } from "./form";
import { ScheduleDialog } from "./ScheduleDialog";
import { scheduleSourceOf } from "./source";

export function useScheduleDialog(
  apiUrl: string,
  auth: Auth,
): {
  open(turn: Turn, threadId: string): void;
  dialog: ReactNode;
} {
  const api = useMemo(() => schedulesApi(apiUrl, auth), [apiUrl, auth]);
  const [source, setSource] = useState<ScheduleSource | null>(null);
  const [, goSchedules] = useSchedulesRoute();
  const open = useCallback(
    (turn: Turn, threadId: string) => setSource(scheduleSourceOf(turn, threadId) ?? null),
    [],
  );
  const dialog = source && (
    <ScheduleDialog
      source={source}
      save={(form) => api.create(scheduleBody(form, source))}
      onClose={() => setSource(null)}
      onOpenSchedules={() => {
        setSource(null);
        goSchedules(true);
      }}
    />
  );
  return { open, dialog };
}
