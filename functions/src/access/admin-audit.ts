import type { Request } from "express";
import type { AdminAudit } from "./audit";
import { accessStores } from "./gate";
import { callerOf } from "./caller";

/** Records an admin action on the audit log (awaited: an action that cannot be recorded is an error). */
export async function auditAction(
  req: Request,
  action: AdminAudit["action"],
  target: string,
  detail?: Record<string, unknown>,
) {
  const caller = callerOf(req);
  const { audit } = await accessStores();
  await audit.record({
    kind: "admin",
    uid: caller.uid,
    email: caller.email?.toLowerCase() ?? null,
    action,
    target,
    ...(detail ? { detail } : {}),
  });
}
