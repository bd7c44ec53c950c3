/**
 * The authenticated API routes. Loaded on the first request that needs them (with zod and the
 * route modules), so the function entry stays as light as a hello-world (cold start).
 */
import { Router } from "express";
import { QuarryError } from "../errors";
import { adminRoutes } from "./admin";
import { assistantRoutes } from "./assistants";
import { bigQueryAuthRoutes } from "./bigquery-auth";
import { feedbackRoutes } from "./feedback";
import { fileRoutes } from "./files";
import { firstScreenRoutes } from "./first-screen";
import { backgroundRoutes } from "./runs/background";
import { joinRoutes } from "./runs/join";
import { runRoutes } from "./runs/routes";
import { scheduleRoutes } from "./schedules";
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
  r.use(firstScreenRoutes());
  r.use(tokenRoutes());
  r.use(adminRoutes());
  r.use(scheduleRoutes());
  r.use(bigQueryAuthRoutes());
  r.use((req) => {
    throw new QuarryError(
      "not_found:route",
      `No route ${req.method} ${req.path}. See docs/api.md for the API.`,
    );
  });
  return r;
}
