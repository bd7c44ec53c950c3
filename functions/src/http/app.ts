import express, { type NextFunction, type Request, type Response } from "express";
import * as logger from "firebase-functions/logger";
import { QuarryError, toErrorBody } from "../errors";
import { requireUser } from "./auth";
import { threadRoutes } from "./threads";

/** Largest JSON body accepted; a question is short, a run's input small. */
export const BODY_LIMIT = "256kb";

/**
 * The API as an express app. It is mounted at `/` (function URL) and at `/api` (Hosting rewrite
 * prefix), so both `https://<fn-url>/ok` and `https://<site>/api/ok` work.
 */
export function createApp(): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", true);

  const api = express.Router();
  // Agent Server answers `GET /ok` without auth: it is the health check.
  api.get("/ok", (_req, res) => {
    res.json({ ok: true });
  });
  api.use(express.json({ limit: BODY_LIMIT }));
  api.use(requireUser);
  api.use(threadRoutes());
  api.use((req) => {
    throw new QuarryError("not_found:route", `No route ${req.method} ${req.path}.`);
  });

  app.use("/api", api);
  app.use("/", api);
  app.use(errorHandler);
  return app;
}

function errorHandler(err: unknown, req: Request, res: Response, _next: NextFunction): void {
  const mapped = mapBodyParserError(err) ?? err;
  const { status, body, expected } = toErrorBody(mapped);
  if (!expected) logger.error("Unhandled error", { path: req.path, err: String(err) });
  if (res.headersSent) {
    res.end();
    return;
  }
  res.status(status).json(body);
}

/** express.json() throws http-errors; turn them into errors that say what to fix. */
function mapBodyParserError(err: unknown): QuarryError | undefined {
  if (err instanceof QuarryError) return undefined;
  const e = err as { type?: string; status?: number; message?: string };
  if (e?.type === "entity.too.large") {
    return new QuarryError("payload_too_large:body", `The request body is larger than ${BODY_LIMIT}.`);
  }
  if (e?.type === "entity.parse.failed") {
    return new QuarryError("bad_request:body", `The request body is not valid JSON: ${e.message}`);
  }
  if (typeof e?.status === "number" && e.status >= 400 && e.status < 500) {
    return new QuarryError("bad_request:body", e.message ?? "Bad request body.");
  }
  return undefined;
}
