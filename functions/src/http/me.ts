/**
 * `GET /me`: who the caller is, their role, their quotas and what they can ask about (the datasets
 * and tables of their scope that the catalog holds).
 */
import type { Request, Response } from "express";
import * as logger from "firebase-functions/logger";
import { accessStores } from "../access/gate";
import { identity, userMode, visibleScope } from "../identity";
import type { Me } from "../contract/access";
import { limitedScope, scopeDatasets, type Scope } from "../tools/scope";
import { withTimeout } from "../timeout";
import { callerOf } from "../access/caller";
import { graphFactory } from "../runs/runtime";

/** How long `GET /me` waits for the catalog (built once per instance, seconds when cold). */
const CATALOG_WAIT_MS = 1_500;

export async function me(req: Request, res: Response): Promise<void> {
  const caller = callerOf(req);
  const { quotas } = await accessStores();
  const access = caller.access!;
  // User mode reads what the person's token can see (cached per person); bounded like the catalog.
  const scope = await withTimeout(visibleScope(caller.uid, access.scope), CATALOG_WAIT_MS, () =>
    limitedScope([]),
  );
  const [figures, datasets] = await Promise.all([
    quotas.figures(caller.uid, access.limits),
    // The page waits on /me before it shows anything: the catalog's names only if it is ready soon.
    withTimeout(visibleDatasets(scope), CATALOG_WAIT_MS, () => [...scope.entries]),
  ]);
  res.json({
    uid: caller.uid,
    email: caller.email ?? null,
    role: access.role,
    quotas: figures,
    scope: { all: scope.all, datasets },
    bigquery: userMode()
      ? { identity: "user", ...(await (await identity()).store.status(caller.uid)) }
      : { identity: "service" },
  } satisfies Me);
}

/** The scope's datasets as the catalog knows them; the scope's own entries when it cannot be read. */
async function visibleDatasets(scope: Scope): Promise<string[]> {
  try {
    const { datasets } = await (await graphFactory()).firstScreen(scope);
    return scopeDatasets(
      scope,
      datasets.flatMap((d) => d.tables.map((t) => ({ id: `${d.name}.${t}` }))),
    );
  } catch (err) {
    logger.warn("GET /me: the catalog could not be read", { err: String(err) });
    return [...scope.entries];
  }
}
