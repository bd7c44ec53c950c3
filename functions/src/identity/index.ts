/**
 * User identity mode (QUARRY_BQ_IDENTITY=user), server side: the per-instance credential broker,
 * the refresh-token store and the tables each person's credentials can read. The warehouse gets
 * the broker as its `CredentialSource`; a run's person gets a scope narrowed to what they can read.
 * Service mode (the default) uses none of it.
 */
import { TtlCache } from "../lru";
import { config } from "../config";
import { QuarryError } from "../errors";
import { firestore } from "../services";
import { limitedScope, narrowScope, type Scope } from "../tools/scope";
import type { Warehouse } from "../tools/types";
import { CredentialBroker } from "./broker";
import { TokenCrypto } from "./crypto";
import { CredentialStore } from "./store";

interface Identity {
  crypto: TokenCrypto;
  store: CredentialStore;
  broker: CredentialBroker;
}

let services: Promise<Identity> | undefined;

/** Whether BigQuery runs with each person's own credentials. */
export function userMode(): boolean {
  const cfg = config();
  return cfg.warehouse.engine === "bigquery" && cfg.identity.mode === "user";
}

/** User mode's services; refuses (naming the settings) when the OAuth client or the key is missing. */
export function identity(): Promise<Identity> {
  const problem = config().identity.problem;
  if (problem) return Promise.reject(new QuarryError("auth:bigquery_not_configured", problem));
  services ??= firestore().then((db) => {
    const cfg = config().identity;
    const crypto = new TokenCrypto(cfg.tokenKey!);
    const store = new CredentialStore(db, crypto);
    return { crypto, store, broker: new CredentialBroker(cfg.oauth, store) };
  });
  return services;
}

/** The broker the warehouse looks tokens up in, in user mode; undefined in service mode. */
export async function credentialSource(): Promise<CredentialBroker | undefined> {
  return userMode() ? (await identity()).broker : undefined;
}

/** Tables each person's credentials can read, per uid, for `QUARRY_READABLE_CACHE_SECONDS`. */
const readable = new TtlCache<string, string[]>(1000, () => config().identity.readableCacheMs);

/** Forgets what a person could read (they disconnected or connected again). */
export function forgetReadable(uid: string): void {
  readable.delete(uid);
}

function readableTables(uid: string, warehouse: Warehouse): Promise<string[]> {
  return readable.get(uid, () =>
    warehouse.listTables({ userId: uid }).then((tables) => tables.map((t) => t.id)),
  );
}

/**
 * The scope a run's person gets: in service mode their group scope; in user mode that scope
 * narrowed to the tables their own credentials can read (listed and `get` with their token,
 * cached per person). Throws `auth:bigquery_consent` when they have no usable consent — at run
 * start, before anything runs — and `auth:bigquery_not_configured` when the deployment cannot.
 */
export async function personScope(uid: string, scope: Scope): Promise<Scope> {
  if (!userMode()) return scope;
  const { broker } = await identity();
  await broker.accessToken(uid);
  const { getWarehouse } = await import("../tools/index.js");
  const warehouse = await getWarehouse(config().warehouse, broker);
  return narrowScope(scope, await readableTables(uid, warehouse));
}

/**
 * What a person's pages may show (the first screen, `GET /me`): their run scope, or — in user mode
 * without usable consent — nothing until they connect BigQuery (never the unnarrowed group scope).
 */
export async function visibleScope(uid: string, scope: Scope): Promise<Scope> {
  if (!userMode()) return scope;
  return personScope(uid, scope).catch(() => limitedScope([]));
}
