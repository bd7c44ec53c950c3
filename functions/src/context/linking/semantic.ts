/**
 * The optional embedding retriever for schema linking: tables and the question in one embedding
 * space (the configured `QUARRY_EMBEDDING_MODEL`), the closest tables by cosine similarity. It
 * finds what words alone miss ("clients" → `customers`, "purchases" → `orders`); linking adds
 * its ranks to the lexical scores (`LinkOptions.semantic`).
 *
 * Serverless manners: the tables are embedded once per catalog and instance, in the background;
 * until that is done, and whenever the embedding service is slow or failing, a question is linked
 * lexically, so the embedding model never holds up an answer for more than `waitMs`.
 */
import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import type { Catalog, CatalogTable } from "../catalog";
import { withTimeout } from "../../timeout";

export interface SemanticMatch {
  id: string;
  /** Cosine similarity to the question, -1…1. */
  similarity: number;
}

export interface SemanticOptions {
  /** How many of the closest tables to return. Default 8. */
  k?: number;
  /** Longest wait for the question's embedding (and the tables', when still being made). Default 2,000 ms. */
  waitMs?: number;
  /** Tables per embedding request. Default 100. */
  batchSize?: number;
  /** Told when embedding fails (the question is then linked lexically). */
  onError?: (err: unknown) => void;
}

/** What stands for a table in the embedding space: its name, description and columns with notes. */
function tableText(t: CatalogTable): string {
  const cols = t.columns.map((c) => (c.description ? `${c.name} (${c.description})` : c.name)).join(", ");
  return `${t.id.replace(/[._]+/g, " ")}. ${t.description ?? ""} Columns: ${cols}`.slice(0, 2_000);
}

function normalise(v: number[]): Float32Array {
  const out = Float32Array.from(v);
  let n = 0;
  for (const x of out) n += x * x;
  n = Math.sqrt(n) || 1;
  for (let i = 0; i < out.length; i++) out[i] /= n;
  return out;
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) s += a[i] * b[i];
  return s;
}

const TIMED_OUT = Symbol("timed out");

export class SemanticTables {
  private readonly vectors = new WeakMap<Catalog, Promise<Float32Array[]>>();
  /** Embedding requests made (tables' batches and questions), for cost accounting and tests. */
  requests = 0;

  constructor(
    private readonly embeddings: EmbeddingsInterface,
    private readonly opts: SemanticOptions = {},
  ) {}

  /** Starts (or joins) embedding the catalog's tables; resolves when they are ready. */
  warm(catalog: Catalog): Promise<Float32Array[]> {
    let v = this.vectors.get(catalog);
    if (!v) {
      v = this.embedTables(catalog);
      this.vectors.set(catalog, v);
      // A failure is forgotten so that a later question tries again.
      v.catch(() => this.vectors.delete(catalog));
    }
    return v;
  }

  /** The tables closest to `text`, best first; empty when the embeddings are not ready in time. */
  /**
   * `only` keeps the tables a person may see, before the top `k` are taken: the embeddings are of
   * the whole catalog (built once), the answer only ever of the scoped part.
   */
  async rank(catalog: Catalog, text: string, only?: (id: string) => boolean): Promise<SemanticMatch[]> {
    const tables = this.warm(catalog);
    tables.catch((err: unknown) => this.opts.onError?.(err));
    this.requests++;
    const question = this.embeddings.embedQuery(text);
    question.catch((err: unknown) => this.opts.onError?.(err));
    try {
      const both = await withTimeout(
        Promise.all([tables, question]),
        this.opts.waitMs ?? 2_000,
        (): typeof TIMED_OUT => TIMED_OUT,
      );
      if (both === TIMED_OUT) return [];
      const [vectors, q] = both;
      const qv = normalise(q);
      return vectors
        .map((v, i) => ({ id: catalog.tables[i].id, similarity: dot(v, qv) }))
        .filter((m) => !only || only(m.id))
        .sort((a, b) => b.similarity - a.similarity)
        .slice(0, this.opts.k ?? 8);
    } catch {
      return [];
    }
  }

  private async embedTables(catalog: Catalog): Promise<Float32Array[]> {
    const texts = catalog.tables.map(tableText);
    const size = this.opts.batchSize ?? 100;
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += size) {
      this.requests++;
      const batch = await this.embeddings.embedDocuments(texts.slice(i, i + size));
      if (batch.length !== Math.min(size, texts.length - i))
        throw new Error(`the embedding model returned ${batch.length} vectors for ${texts.length} tables`);
      out.push(...batch.map(normalise));
    }
    return out;
  }
}
