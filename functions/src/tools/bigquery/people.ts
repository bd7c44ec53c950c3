/**
 * User identity mode (QUARRY_BQ_IDENTITY=user): BigQuery clients whose every request carries one
 * person's access token, looked up by uid from the injected credential source on each request
 * (so a refreshed token is used at once). A client holds no token itself, only the uid; nothing
 * here is ever put in a run's configuration, state, events or logs.
 */
import type { BigQuery } from "@google-cloud/bigquery";
import type { WarehouseConfig } from "../../config";
import { QuarryError } from "../../errors";
import type { CredentialSource } from "../types";
import { createBigQueryClient, type HeaderAuth } from "./client";

/** People whose clients are kept per instance; beyond it the oldest is dropped (it is cheap to rebuild). */
const MAX_PEOPLE = 200;

export type ClientFactory = (cfg: WarehouseConfig["bigquery"], auth: HeaderAuth) => Promise<BigQuery>;

export class PersonClients {
  private readonly clients = new Map<string, Promise<BigQuery>>();
  constructor(
    private readonly cfg: WarehouseConfig["bigquery"],
    readonly credentials: CredentialSource,
    private readonly build: ClientFactory = createBigQueryClient,
  ) {}

  /** The client whose requests carry `uid`'s access token. */
  for(uid: string): Promise<BigQuery> {
    let client = this.clients.get(uid);
    if (!client) {
      const token = async () => this.credentials.accessToken(uid);
      client = this.build(this.cfg, {
        getRequestHeaders: async () => new Headers({ authorization: `Bearer ${await token()}` }),
        getAccessToken: async () => ({ token: await token() }),
      });
      client.catch(() => this.clients.delete(uid));
      if (this.clients.size >= MAX_PEOPLE) this.clients.delete(this.clients.keys().next().value!);
      this.clients.set(uid, client);
    }
    return client;
  }
}

/** BigQuery answered 401: the access token was not accepted (expired early, or revoked). */
export function isUnauthorized(err: unknown): boolean {
  return (err as { code?: unknown })?.code === 401;
}

/** A table or dataset the person's credentials may not read (or that is gone): left out of their lists. */
export function isDeniedOrGone(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return code === 403 || code === 404;
}

/** BigQuery refused a token just refreshed: the consent behind it is no longer good. */
export function consentRefused(): QuarryError {
  return new QuarryError(
    "auth:bigquery_consent",
    "BigQuery did not accept your Google credentials. Click Connect BigQuery to allow access again, then ask again.",
  );
}
