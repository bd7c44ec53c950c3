/**
 * Cloud Functions entry. Keep this file's import graph light: LangChain, Vertex AI, BigQuery,
 * DuckDB and the Firestore client load on first use, not here (cold start).
 */
import { onRequest } from "firebase-functions/v2/https";
import {
  CONCURRENCY,
  MEMORY_MIB,
  REGION,
  TIMEOUT_SECONDS,
  checkEnvironmentAtLoad,
  functionSecrets,
} from "./config";
import * as logger from "firebase-functions/logger";
import { installProcessGuards } from "./http/abort";
import { createApp } from "./http/app";

checkEnvironmentAtLoad();
installProcessGuards((message, data) => logger.error(message, data));

/** The Quarry API: LangGraph Agent Server protocol over HTTPS with SSE streaming. */
export const api = onRequest(
  {
    region: REGION,
    memory: MEMORY_MIB,
    timeoutSeconds: TIMEOUT_SECONDS,
    concurrency: CONCURRENCY,
    invoker: "public",
    secrets: functionSecrets(),
  },
  createApp(),
);
