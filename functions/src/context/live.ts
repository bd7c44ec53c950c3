/**
 * The team's context as it is now: the authored files and committed imports read at start-up,
 * with the imports applied in the admin page since (Firestore, imports/firestore-store.ts). When
 * the stored imports change, the knowledge is rebuilt once (their tables described again) and,
 * when its notes or joins changed, so is the catalog; questions meanwhile use the last one built.
 */
import type { Warehouse } from "../tools/types";
import type { CatalogCache } from "./catalog";
import { withImports, type TeamContextFiles } from "./index";
import type { ImportedLayer } from "./imports/types";
import type { KnowledgeBase } from "./knowledge";

export interface TeamContext {
  knowledge: KnowledgeBase;
  catalog: CatalogCache;
}

export type StoredImports = () => Promise<{ version: string; layers: ImportedLayer[] }>;

export class LiveContext {
  private built: { version: string; ctx: Promise<TeamContext> } | undefined;

  constructor(
    private readonly files: Pick<TeamContextFiles, "authored" | "imports">,
    private readonly warehouse: Warehouse,
    /** The catalog for a knowledge (the same one while its notes and joins are the same). */
    private readonly catalogOf: (knowledge: KnowledgeBase) => CatalogCache,
    private readonly stored?: StoredImports,
    private readonly onError?: (err: unknown) => void,
  ) {}

  async current(): Promise<TeamContext> {
    const s = this.stored ? await this.stored().catch(() => undefined) : undefined;
    const version = s?.version ?? this.built?.version ?? "";
    if (this.built && this.built.version === version) return this.built.ctx;
    const previous = this.built;
    const build = async (layers: readonly ImportedLayer[]): Promise<TeamContext> => {
      const knowledge = await withImports(this.files, layers, this.warehouse);
      return { knowledge, catalog: this.catalogOf(knowledge) };
    };
    const ctx = build(s?.layers ?? []).catch((err: unknown) => {
      this.onError?.(err);
      // Tried again on the next question; this one gets what was in use (or the files alone).
      if (this.built?.ctx === ctx) this.built = previous;
      return previous ? previous.ctx : build([]);
    });
    this.built = { version, ctx };
    return ctx;
  }
}
