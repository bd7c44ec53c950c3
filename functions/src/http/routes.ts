/**
 * The HTTP channel's authenticated routes (the Agent Server API v1 and v2, Quarry's own). Loaded on the first request that needs them (with zod and the
 * route modules), so the function entry stays as light as a hello-world (cold start).
 */
import { Router } from "express";
import { adminRoutes } from "./admin";
import { assistantRoutes } from "./assistants";
import { bigQueryAuthRoutes } from "./bigquery-auth";
import { feedbackRoutes } from "./feedback";
import { fileRoutes } from "./files";
import { firstScreenRoutes } from "./first-screen";
import { preferenceRoutes } from "./preferences";
import { backgroundRoutes } from "./run-routes/background";
import { joinRoutes } from "./run-routes/join";
import { runRoutes } from "./run-routes/runs";
import { shareRoutes } from "./shares/routes";
import { threadRoutes } from "./threads";
import { tokenRoutes } from "./tokens";
import { v2Routes } from "./v2/routes";

export function apiRoutes(): Router {
  const r = Router();
  r.use(assistantRoutes());
  r.use(threadRoutes());
  r.use(fileRoutes());
  r.use(runRoutes());
  r.use(joinRoutes());
  r.use(backgroundRoutes());
  r.use(v2Routes());
  r.use(feedbackRoutes());
  r.use(shareRoutes());
  r.use(firstScreenRoutes());
  r.use(preferenceRoutes());
  r.use(tokenRoutes());
  r.use(adminRoutes());
  r.use(bigQueryAuthRoutes());
  return r;
}
