/**
 * The HTTP channel's routes that need no sign-in: the Agent Server's health check and server info,
 * what the page needs before sign-in, and Google's redirect back in user identity mode.
 */
import { Router } from "express";
import { config } from "../config";
import type { ClientLimits } from "../contract/limits";
import { serverInfo } from "../contract/protocol";
import { clientModelStatus } from "./model-status";

export function publicRoutes(): Router {
  const r = Router();
  // Agent Server answers `GET /ok` without auth: it is the health check.
  r.get("/ok", (_req, res) => {
    res.json({ ok: true });
  });
  // Agent Server's `GET /info`: what this server is and which of the protocol's features it has,
  // so generic clients can adapt (no auth, like /ok).
  r.get("/info", (_req, res) => {
    res.json(serverInfo({ resumableStreams: config().runLog }));
  });
  // What the web page needs before sign-in: where the API and (locally) the emulators are, and
  // whether a model is configured (the page shows a set-up card instead of a chat that must fail).
  r.get("/client-config", (_req, res) => {
    const cfg = config();
    res.json({
      projectId: cfg.projectId,
      region: cfg.region,
      apiUrl: cfg.apiUrl,
      ...(cfg.inEmulator && cfg.emulators.auth ? { authEmulatorUrl: `http://${cfg.emulators.auth}` } : {}),
      ...(cfg.inEmulator && cfg.emulators.firestore
        ? { firestoreEmulatorHost: cfg.emulators.firestore }
        : {}),
      model: clientModelStatus(),
      // Whose credentials BigQuery uses: "user" makes the page offer Connect BigQuery.
      bigqueryIdentity: cfg.warehouse.engine === "bigquery" ? cfg.identity.mode : "service",
      // What the page checks before it sends a file (it still gets the server's worded refusal).
      limits: {
        attachmentMaxMb: cfg.attachmentMaxMb,
        uploadMaxMb: cfg.uploads.maxMb,
        uploadMaxFiles: cfg.uploads.maxFiles,
      } satisfies ClientLimits,
    });
  });
  // Google's redirect after a person allowed BigQuery access (user identity mode): a browser
  // navigation without a Firebase token; the flow's signed state says who asked.
  r.get("/auth/bigquery/callback", (req, res, next) => {
    import("./bigquery-auth.js").then((m) => m.bigQueryCallback(req, res)).catch(next);
  });
  return r;
}
