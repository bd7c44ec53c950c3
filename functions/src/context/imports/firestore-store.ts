/**
 * Imports pushed through the API (`POST /admin/context/imports`, a CI step after `dbt build`) and
 * reviewed in the admin page, kept in Firestore (`context_imports/{source}-{project}`, server
 * only): the active layer and, while one waits for review, the pushed layer with its diff. An
 * applied change reaches every instance's prompts within `maxAgeMs` (5 s) of its commit, without a redeploy.
 * Layers are stored gzip-compressed (a document holds 1 MiB); one that does not fit is refused.
 * The committed files (store.ts) stay the way for a team that versions its imports; a stored
 * import of the same project wins over the committed file.
 */
import { createHash } from "node:crypto";
import { gunzipSync, gzipSync } from "node:zlib";
import type { Firestore } from "firebase-admin/firestore";
import type { ContextImportView, ImportLayerSummary } from "../../contract/admin";
import { applyChanges, StaleReviewError } from "./apply";
import { diffImports, type ImportChange } from "./diff";
import { ImportError } from "./errors";
import type { ImportedLayer } from "./types";

export const IMPORTS_COLLECTION = "context_imports";

/** How old an instance's copy of the active imports may be: a question this long after an apply uses it. */
export const IMPORTS_MAX_AGE_MS = 5_000;

/** Firestore's document limit less room for the diff and the fields beside the layer. */
const MAX_LAYER_BYTES = 700 * 1024;

/** What the admin page shows of a layer: how much it holds. */
type LayerSummary = ImportLayerSummary;

/** An import as `GET /admin/context/imports` answers it. */
export type ImportRecord = ContextImportView;

interface StoredDoc {
  source: ImportedLayer["source"];
  project: string;
  /** Changes whenever the active layer does: what instances compare to know theirs is stale. */
  activeVersion?: string;
  active?: { layer: Buffer; summary: LayerSummary; appliedAt: string; appliedBy: string };
  pending?: {
    layer: Buffer;
    summary: LayerSummary;
    changes: ImportChange[];
    notices: ImportedLayer["notices"];
    pushedAt: string;
    pushedBy: string;
  };
}

/** What `list` reads of a document: everything but the layers. */
const LISTED_FIELDS = [
  "source",
  "project",
  "active.summary",
  "active.appliedAt",
  "active.appliedBy",
  "pending.summary",
  "pending.changes",
  "pending.notices",
  "pending.pushedAt",
  "pending.pushedBy",
];

export const importId = (source: string, project: string) => `${source}-${project.replace(/[^\w.-]+/g, "_")}`;

export function summarize(layer: ImportedLayer): LayerSummary {
  return {
    generatedAt: layer.generatedAt,
    checksum: layer.checksum,
    tables: layer.tables.length,
    columns: layer.tables.reduce((n, t) => n + t.columns.length, 0),
    joins: layer.joins.length,
    metrics: layer.metrics.length,
    metricsWithSql: layer.metrics.filter((m) => m.sql).length,
    savedQueries: layer.queries.length,
  };
}

function pack(layer: ImportedLayer): Buffer {
  const bytes = gzipSync(JSON.stringify(layer));
  if (bytes.length > MAX_LAYER_BYTES) {
    throw new ImportError(
      `${layer.source} project "${layer.project}"`,
      `is ${Math.round(bytes.length / 1024)} KiB compressed, more than the ${MAX_LAYER_BYTES / 1024} KiB an import may keep in Firestore: import it with \`npm run context -- import\` and deploy the file it writes, or import its parts as separate projects`,
    );
  }
  return bytes;
}

function unpack(bytes: Buffer | Uint8Array): ImportedLayer {
  return JSON.parse(gunzipSync(bytes).toString("utf8")) as ImportedLayer;
}

function recordOf(id: string, d: StoredDoc): ImportRecord {
  return {
    id,
    source: d.source,
    project: d.project,
    ...(d.active
      ? { active: { ...d.active.summary, appliedAt: d.active.appliedAt, appliedBy: d.active.appliedBy } }
      : {}),
    ...(d.pending
      ? {
          pending: {
            ...d.pending.summary,
            pushedAt: d.pending.pushedAt,
            pushedBy: d.pending.pushedBy,
            changes: d.pending.changes,
            notices: d.pending.notices,
          },
        }
      : {}),
  };
}

/** The imports in Firestore: pushed, reviewed, applied; and the active layers, cached per instance. */
export class ImportStore {
  private cached: { at: number; version: string; layers: ImportedLayer[] } | undefined;
  private reading: Promise<{ version: string; layers: ImportedLayer[] }> | undefined;

  constructor(
    private readonly db: Firestore,
    private readonly maxAgeMs = IMPORTS_MAX_AGE_MS,
  ) {}

  private col() {
    return this.db.collection(IMPORTS_COLLECTION);
  }

  async list(): Promise<ImportRecord[]> {
    // The summaries only: a layer (up to 700 KiB each) is never read to list it.
    const snap = await this.col()
      .select(...LISTED_FIELDS)
      .limit(200)
      .get();
    return snap.docs
      .map((d) => recordOf(d.id, d.data() as StoredDoc))
      .sort((a, b) => a.id.localeCompare(b.id));
  }

  async get(id: string): Promise<ImportRecord | undefined> {
    const snap = await this.col().doc(id).get();
    return snap.exists ? recordOf(id, snap.data() as StoredDoc) : undefined;
  }

  /** The project's active layer, if any. */
  async active(id: string): Promise<ImportedLayer | undefined> {
    const snap = await this.col().doc(id).get();
    const d = snap.data() as StoredDoc | undefined;
    return d?.active ? unpack(d.active.layer) : undefined;
  }

  /**
   * Keeps `layer` as the project's import waiting for review (replacing one that waited), with
   * its diff against the active layer. Nothing active changes.
   */
  async push(layer: ImportedLayer, by: string): Promise<ImportRecord> {
    const id = importId(layer.source, layer.project);
    const ref = this.col().doc(id);
    const packed = pack(layer);
    return this.db.runTransaction(async (tx) => {
      const d = (await tx.get(ref)).data() as StoredDoc | undefined;
      const before = d?.active ? unpack(d.active.layer) : undefined;
      const pending: StoredDoc["pending"] = {
        layer: packed,
        summary: summarize(layer),
        changes: diffImports(before, layer),
        notices: layer.notices,
        pushedAt: new Date().toISOString(),
        pushedBy: by,
      };
      const next: StoredDoc = { ...(d ?? {}), source: layer.source, project: layer.project, pending };
      tx.set(ref, next);
      return recordOf(id, next);
    });
  }

  /**
   * Applies the waiting import, whole or the changes `ids` names; what is left stays waiting.
   * `reviewed`: an admin applied it from the review, so its definitions are named as approved.
   * Throws StaleReviewError when nothing waits or the review was of another push
   * (`checksum` is not the waiting one's, or `ids` names changes it does not have).
   */
  async apply(
    id: string,
    by: string,
    opts: { ids?: readonly string[]; checksum?: string; reviewed: boolean },
  ): Promise<{ record: ImportRecord; applied: ImportChange[] }> {
    const { ids, checksum } = opts;
    const ref = this.col().doc(id);
    const out = await this.db.runTransaction(async (tx) => {
      const d = (await tx.get(ref)).data() as StoredDoc | undefined;
      if (!d?.pending) {
        throw new StaleReviewError(
          `${id} has no import waiting for review (it was applied or dismissed since): reload the review.`,
        );
      }
      if (checksum && checksum !== d.pending.summary.checksum) {
        throw new StaleReviewError(
          `Another import of ${id} was pushed since this review was loaded: reload the review.`,
        );
      }
      const before = d.active ? unpack(d.active.layer) : undefined;
      const pushed = unpack(d.pending.layer);
      const { layer, applied, left } = applyChanges(before, pushed, ids);
      if (opts.reviewed) layer.reviewedBy = by;
      else delete layer.reviewedBy;
      const appliedAt = new Date().toISOString();
      const active = { layer: pack(layer), summary: summarize(layer), appliedAt, appliedBy: by };
      const next: StoredDoc = {
        source: d.source,
        project: d.project,
        activeVersion: createHash("sha256")
          .update(`${appliedAt}\n${active.layer.toString("base64")}`)
          .digest("hex"),
        active,
        ...(left.length ? { pending: { ...d.pending, changes: left } } : {}),
      };
      tx.set(ref, next);
      return { record: recordOf(id, next), applied };
    });
    this.cached = undefined;
    return out;
  }

  /** Drops the import waiting for review (the active one stays); false when none waited. */
  async dismiss(id: string): Promise<boolean> {
    const ref = this.col().doc(id);
    return this.db.runTransaction(async (tx) => {
      const d = (await tx.get(ref)).data() as StoredDoc | undefined;
      if (!d?.pending) return false;
      const { pending: _dropped, ...rest } = d;
      if (rest.active) tx.set(ref, rest);
      else tx.delete(ref);
      return true;
    });
  }

  /**
   * Every active layer with a version that changes when any does; re-read at most every
   * `maxAgeMs` (only the versions, the layers when one changed). A failed read serves the last.
   */
  async current(): Promise<{ version: string; layers: ImportedLayer[] }> {
    const c = this.cached;
    if (c && Date.now() - c.at < this.maxAgeMs) return c;
    // Stamped when the read starts, also when it found nothing new: a read that began before an
    // apply committed is never served past `maxAgeMs` after that, however long it took.
    const started = Date.now();
    this.reading ??= this.read(c)
      .then(({ version, layers }) => {
        this.cached = { at: started, version, layers };
        return { version, layers };
      })
      .catch(() => c ?? { version: "", layers: [] })
      .finally(() => (this.reading = undefined));
    return this.reading;
  }

  private async read(
    c: { version: string; layers: ImportedLayer[] } | undefined,
  ): Promise<{ version: string; layers: ImportedLayer[] }> {
    const versions = await this.col().select("activeVersion").limit(200).get();
    const version = versions.docs
      .map((d) => `${d.id}=${(d.get("activeVersion") as string | undefined) ?? ""}`)
      .sort()
      .join(",");
    if (c && c.version === version) return c;
    const snap = await this.col().limit(200).get();
    const layers = snap.docs
      .map((d) => d.data() as StoredDoc)
      .filter((d) => d.active)
      .map((d) => unpack(d.active!.layer));
    return { version, layers };
  }
}
