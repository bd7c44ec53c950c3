/**
 * Creates the BigQuery client. In production it uses Application Default Credentials (the
 * function's service account). With an `apiEndpoint` (BIGQUERY_EMULATOR_HOST, a local stand-in)
 * it must never look for Google credentials: without an auth client, google-auth-library probes
 * the metadata server and credential files before the first request, which hangs or fails
 * offline. So the client gets an auth client that adds no headers.
 */
import type { BigQuery } from "@google-cloud/bigquery";
import type { WarehouseConfig } from "../../config";

/** Satisfies GoogleAuth's use of `authClient` (getRequestHeaders) without any network call. */
const noCredentials = {
  getRequestHeaders: async () => new Headers(),
  getAccessToken: async () => ({ token: null }),
};

/** An auth client that only adds request headers (a person's bearer token in user identity mode). */
export interface HeaderAuth {
  getRequestHeaders(): Promise<Headers>;
  getAccessToken(): Promise<{ token: string | null }>;
}

/** `auth`: whose requests these are (user identity mode); default: the service account (ADC). */
export async function createBigQueryClient(
  cfg: WarehouseConfig["bigquery"],
  auth?: HeaderAuth,
): Promise<BigQuery> {
  const { BigQuery } = await import("@google-cloud/bigquery");
  const endpoint = cfg.apiEndpoint?.replace(/\/+$/, "");
  const client = new BigQuery({
    projectId: cfg.billingProject,
    location: cfg.location,
    // Retries are ours (bounded, only where nothing ran); the client's own would double them.
    autoRetry: false,
    ...(endpoint ? { apiEndpoint: endpoint, authClient: noCredentials as never } : {}),
    ...(auth ? { authClient: auth as never } : {}),
  });
  // The client uses BIGQUERY_EMULATOR_HOST from the environment verbatim as its base URL, with no
  // scheme or path; pin the base URL to the configured endpoint so both spellings work the same.
  if (endpoint) (client as unknown as { baseUrl: string }).baseUrl = `${endpoint}/bigquery/v2`;
  return client;
}
