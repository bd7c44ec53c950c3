/**
 * `GET /first-screen`: what an empty conversation offers — questions to start with and the
 * datasets Quarry can answer about. Starters are the authored context's verified queries marked
 * `starter: true`; without any, the questions most people on the team asked.
 */
import { Router } from "express";
import type { FirstScreen } from "../contract/events";
import { visibleScope } from "../identity";
import { callerOf } from "../access/caller";
import { graphFactory, threadStore } from "../runs/runtime";

/** How many starters the page shows, and how a team question qualifies as "most asked". */
const STARTERS = 6;
const TEAM_SAMPLE = 500;
const TEAM_MIN_PEOPLE = 2;

export function firstScreenRoutes(): Router {
  const r = Router();
  r.get("/first-screen", async (req, res) => {
    const caller = callerOf(req);
    // User mode: the tables the person's own credentials can read (none before they connect).
    const scope = await visibleScope(caller.uid, caller.access!.scope);
    const { starters, datasets } = await (await graphFactory()).firstScreen(scope);
    let body: FirstScreen;
    if (starters.length) {
      body = { starters: starters.slice(0, STARTERS), startersFrom: "context", datasets };
    } else {
      const asked = await (
        await threadStore()
      ).popularQuestions({ sample: TEAM_SAMPLE, minPeople: TEAM_MIN_PEOPLE, limit: STARTERS, scope });
      body = { starters: asked, startersFrom: asked.length ? "team" : "none", datasets };
    }
    res.json(body);
  });
  return r;
}
