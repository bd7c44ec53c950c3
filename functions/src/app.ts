import cors from "cors";
import express, { type NextFunction, type Request, type RequestHandler, type Response } from "express";
import * as logger from "firebase-functions/logger";
import { CORS_ORIGINS, config, isDiscoveryPass } from "./config";
import { QuarryError, toErrorBody } from "./errors";
import { accessProblem, requireAccess } from "./access/gate";
import { requireUser } from "./access/caller";
import { mcpRoutes } from "./mcp/index";
import { oauthRoutes } from "./mcp/oauth/index";
import { chatLinkRoutes, chatRoomDelivery, chatRoutes } from "./chat/index";
import { publicRoutes } from "./http/public";
import { warmWarehouse } from "./tools/open";
import { MAX_ATTACHMENTS } from "./contract/limits";
import { UPLOAD_BODY_MAX_BYTES } from "./contract/uploads";

/** Largest JSON body accepted; a question is short, a run's input small. */
const BODY_LIMIT = "256kb";
const BODY_LIMIT_BYTES = 256 * 1024;

/**
 * A request that starts a run may carry a question's images and PDFs (runs/attachments.ts): up to
 * MAX_ATTACHMENTS of QUARRY_ATTACHMENT_MAX_MB each, base64, beside the usual body — under the
 * platform's own 32 MiB.
 */
const RUN_START = /^\/threads\/[^/]+\/(runs(\/stream|\/wait)?|commands)\/?$/;
const runBodyLimitBytes = () =>
  Math.min(
    31 * 1024 * 1024,
    BODY_LIMIT_BYTES + Math.ceil((MAX_ATTACHMENTS * config().attachmentMaxMb * 1024 * 1024 * 4) / 3),
  );

/** A file brought into a conversation as a table: the file itself is the body (http/files.ts). */
const UPLOAD = /^\/threads\/[^/]+\/files\/?$/;

/** A dbt or LookML project pushed for import (http/context-imports.ts): its artifacts are the body. */
const CONTEXT_IMPORT = /^\/admin\/context\/imports\/?$/;
const IMPORT_BODY_MAX_BYTES = 31 * 1024 * 1024;

/** The largest body this request may send, and how to say it. */
function bodyLimitOf(req: Request): { bytes: number; text: string } {
  if (req.method === "POST" && CONTEXT_IMPORT.test(req.path)) {
    return {
      bytes: IMPORT_BODY_MAX_BYTES,
      text: "31 MiB (a project's files; send the JSON gzip-compressed, Content-Encoding: gzip)",
    };
  }
  if (req.method === "POST" && UPLOAD.test(req.path)) {
    return {
      bytes: UPLOAD_BODY_MAX_BYTES,
      text: "31 MiB (a file; send a larger CSV gzip-compressed, Content-Type: application/gzip)",
    };
  }
  if (req.method !== "POST" || !RUN_START.test(req.path))
    return { bytes: BODY_LIMIT_BYTES, text: BODY_LIMIT };
  const bytes = runBodyLimitBytes();
  return { bytes, text: `${(bytes / 1024 / 1024).toFixed(0)} MB (a question with its attachments)` };
}

/** The platform pre-parses bodies up to its own (much larger) limit, so ours is enforced here. */
function limitBodySize(req: Request, _res: Response, next: NextFunction): void {
  const raw = (req as Request & { rawBody?: Buffer }).rawBody;
  const size = raw?.length ?? Number(req.get("content-length") ?? 0);
  const limit = bodyLimitOf(req);
  if (size > limit.bytes) {
    const code = UPLOAD.test(req.path) ? "payload_too_large:upload" : "payload_too_large:body";
    throw new QuarryError(code, `The request body is larger than ${limit.text}.`);
  }
  next();
}

/**
 * The `api` function's app: which channels it serves and in what order — the HTTP channel's public
 * routes, MCP and its OAuth server (their own credentials), then sign-in and the access gate in
 * front of every other route by construction, then the HTTP API's and the schedules' routes. A new
 * channel is mounted here (CONTRIBUTING.md, "Add a channel"); channels never mount each other.
 *
 * The API as an express app. It is mounted at `/` (function URL) and at `/api` (Hosting rewrite
 * prefix), so both `https://<fn-url>/ok` and `https://<site>/api/ok` work.
 */
export function createApp(): express.Express {
  reportAccessPolicy();
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", true);
  // The web app calls the function URL directly (Hosting rewrites buffer streams), so CORS matters.
  app.use(
    cors({
      origin: (origin, cb) => cb(null, !origin || allowedOrigins().includes(origin)),
      exposedHeaders: ["Content-Location", "Location"],
      maxAge: 3600,
    }),
  );

  const api = express.Router();
  // The HTTP channel's routes before sign-in: health, server info, client config, BigQuery callback.
  api.use(publicRoutes());
  api.use(limitBodySize);
  // Cloud Functions (and its emulator) parse JSON before the app runs; this parser covers the rest.
  // One parser per limit (the small one for most routes), made when first needed.
  const parsers = new Map<number, RequestHandler>();
  api.use((req, res, next) => {
    const { bytes } = bodyLimitOf(req);
    let parser = parsers.get(bytes);
    if (!parser) parsers.set(bytes, (parser = express.json({ limit: bytes, strict: false })));
    return parser(req, res, next);
  });
  // MCP clients (docs/mcp.md): their own credentials (a personal access token too), the same access gate.
  api.use("/mcp", mcpRoutes());
  // OAuth for hosted MCP clients (QUARRY_MCP_OAUTH): how a person gets a token for /mcp.
  api.use(oauthRoutes());
  // Slack's endpoints (docs/chat.md): Slack's own signature on every request, verified before anything.
  api.use(chatRoutes());
  api.use(requireUser);
  // Every route below is behind the access gate by construction (members, roles, fail closed).
  api.use(requireAccess);
  api.use(warmOnce());
  api.use(chatLinkRoutes());
  api.use(lazyRoutes());

  app.use("/api", api);
  app.use("/", api);
  app.use(errorHandler);
  return app;
}

/**
 * At an instance's first admitted request, the local warehouse's worker processes start (see
 * `warmWarehouse`): a new conversation's first request (creating its thread) comes before its
 * question, so the question finds them started.
 */
function warmOnce(): RequestHandler {
  let warmed = false;
  return (_req, _res, next) => {
    if (!warmed) {
      warmed = true;
      warmWarehouse();
    }
    next();
  };
}

/**
 * Loads the channels' authenticated routes (and zod) on first use: the HTTP API's, then the
 * schedules'; what none of them answers is the 404 that points at the API's docs.
 */
function lazyRoutes(): RequestHandler {
  let routes: Promise<RequestHandler> | undefined;
  return (req, res, next) => {
    routes ??= Promise.all([import("./http/routes.js"), import("./schedules/routes.js")]).then(
      ([http, schedules]) => {
        const r = express.Router();
        r.use(http.apiRoutes());
        r.use(schedules.scheduleRoutes(chatRoomDelivery));
        r.use((unmatched) => {
          throw new QuarryError(
            "not_found:route",
            `No route ${unmatched.method} ${unmatched.path}. See docs/api.md for the API.`,
          );
        });
        return r;
      },
    );
    routes.then((r) => r(req, res, next), next);
  };
}

function allowedOrigins(): string[] {
  return CORS_ORIGINS.value()
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

function errorHandler(err: unknown, req: Request, res: Response, _next: NextFunction): void {
  const mapped = mapBodyParserError(err, bodyLimitOf(req).text) ?? err;
  const { status, body, expected, headers } = toErrorBody(mapped);
  if (!expected)
    logger.error("Unhandled error", { path: req.path, err: String((err as Error)?.stack ?? err) });
  if (res.headersSent) {
    res.end();
    return;
  }
  res
    .status(status)
    .set(headers ?? {})
    .json(body);
}

/** express.json() throws http-errors; turn them into errors that say what to fix. */
function mapBodyParserError(err: unknown, limit: string): QuarryError | undefined {
  if (err instanceof QuarryError) return undefined;
  const e = err as { type?: string; status?: number; message?: string };
  if (e?.type === "entity.too.large") {
    return new QuarryError("payload_too_large:body", `The request body is larger than ${limit}.`);
  }
  if (e?.type === "entity.parse.failed") {
    return new QuarryError("bad_request:body", `The request body is not valid JSON: ${e.message}`);
  }
  if (typeof e?.status === "number" && e.status >= 400 && e.status < 500) {
    return new QuarryError("bad_request:body", e.message ?? "Bad request body.");
  }
  return undefined;
}

/**
 * Says once, when an instance starts serving, how access is decided: the fail-closed words when no
 * policy is configured (the function then serves no run), or the local open policy's line in the
 * emulator. firebase-tools' discovery pass loads this code with a bare environment (without the
 * launcher's local policy) and serves nothing, so it reports nothing.
 */
function reportAccessPolicy(): void {
  if (isDiscoveryPass()) return;
  try {
    const problem = accessProblem();
    if (problem) logger.error(`Access: ${problem}`);
    else if (config().access.localOpen) {
      logger.info(
        "Access: local open policy (QUARRY_ACCESS_POLICY=local-open): every Auth emulator account may use Quarry.",
      );
    }
  } catch (err) {
    logger.error(`Access: the configuration cannot be read: ${String(err)}`);
  }
}
