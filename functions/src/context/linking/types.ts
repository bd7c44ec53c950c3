/** What schema linking answers and what it is asked with. */
import type { ValueMatch } from "./evidence";
import type { SemanticMatch } from "./semantic";

export interface LinkedSchema {
  /**
   * Best first. `brief`: a table of another dataset the words fit nearly as well, shown by its
   * columns and types only.
   */
  tables: { id: string; score: number; brief?: boolean }[];
  /** `table.column` whose names or values the question mentions. */
  columns: string[];
  values: ValueMatch[];
  /** Key joins among the chosen tables (`a.k = b.k`). */
  joins: string[];
  /**
   * The datasets shown, best first, when the question's words fit more than one (no authored
   * context settled it); empty otherwise.
   */
  datasets: string[];
  /** True when the whole catalog was small enough to give in full. */
  all: boolean;
  /** Tables in the catalog. */
  total: number;
}

export interface LinkOptions {
  /** Earlier user turns, most recent last (they count half). */
  recent?: string[];
  /** Texts (SQL of chosen glossary entries and examples) whose table ids are pulled in. */
  hints?: string[];
  /** The datasets the authored context is about: their tables rank first. */
  home?: string[];
  maxTables?: number;
  allUpTo?: number;
  /** The tables an embedding retriever found closest to the question, best first (optional). */
  semantic?: SemanticMatch[];
}
