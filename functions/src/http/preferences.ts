/**
 * `GET|PATCH /me/preferences`: the person's view — `business` (the answer, chart, key figures and
 * how it was computed, with the SQL and rows behind Details) or `analyst` (everything open). One
 * never chosen is their group's default (`PATCH /admin/groups/:name {defaultView}`), else analyst.
 * The page and the MCP `ask` text follow it.
 */
import { Router, type Request, type Response } from "express";
import { z } from "zod";
import { accessStores, preferencesOf } from "../access/gate";
import { callerOf } from "../access/caller";
import { VIEWS, type Preferences } from "../contract/access";
import { parse } from "../runs/schemas";

const PatchBody = z.strictObject({ view: z.enum(VIEWS) });

export function preferenceRoutes(): Router {
  const r = Router();
  r.get("/me/preferences", read);
  r.patch("/me/preferences", change);
  return r;
}

async function read(req: Request, res: Response): Promise<void> {
  res.json((await preferencesOf(callerOf(req))) satisfies Preferences);
}

async function change(req: Request, res: Response): Promise<void> {
  const body = parse(PatchBody, req.body ?? {}, "body");
  const { preferences } = await accessStores();
  await preferences.setView(callerOf(req).uid, body.view);
  res.json((await preferencesOf(callerOf(req))) satisfies Preferences);
}
