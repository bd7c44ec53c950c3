/**
 * From the authored context files, what one question gets: every rule, the glossary entries whose
 * term or a synonym the question mentions (as words; plurals and one-letter typos in longer words
 * allowed), the notes of the tables those entries, the examples or the question name, and the
 * verified queries most similar to the question (MiniSearch, BM25 over the questions without stop
 * words) as examples. Lexical and offline: no model call, no network.
 */
import MiniSearch from "minisearch";
import { joinEnd, type ContextFile, type GlossaryItem, type VerifiedQueryItem } from "./authored";
import type { DeclaredJoin } from "./catalog";

/** Verified queries shown as examples per question. */
const MAX_EXAMPLES = 3;

export interface Knowledge {
  rules: string[];
  glossary: GlossaryItem[];
  examples: VerifiedQueryItem[];
  /** `table` → its note, and `table.column` → its note, for the tables that matter here. */
  notes: Record<string, string>;
  /** The datasets the context files are about. */
  datasets: string[];
}

/** What schema linking takes from the chosen knowledge: the SQL it shows, and its datasets. */
export function linkHints(k: Knowledge): { hints: string[]; home: string[] } {
  return {
    hints: [...k.glossary.map((g) => g.sql ?? ""), ...k.examples.map((e) => e.sql)],
    home: k.datasets,
  };
}

interface Doc {
  id: number;
  text: string;
}

/** Words that say nothing about which table or example is meant. */
export const STOP_WORDS = new Set(
  (
    "a an and are as at be by for from has have how i in is it many me much of on or per show tell the " +
    "their there these this to was were what when where which who why with"
  ).split(" "),
);

/** Lower-case words, plurals made singular ("orders" → "order", "countries" → "country"). */
export function words(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []).map((w) =>
    w.length > 4 && w.endsWith("ies")
      ? `${w.slice(0, -3)}y`
      : w.length > 3 && w.endsWith("s") && !w.endsWith("ss")
        ? w.slice(0, -1)
        : w,
  );
}

/** At most one edit apart (insert, delete or substitute). */
export function nearlyEqual(a: string, b: string): boolean {
  if (a === b) return true;
  if (Math.min(a.length, b.length) < 5 || Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  let j = 0;
  let edits = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      i++;
      j++;
      continue;
    }
    if (++edits > 1) return false;
    if (a.length > b.length) i++;
    else if (b.length > a.length) j++;
    else {
      i++;
      j++;
    }
  }
  return edits + (a.length - i) + (b.length - j) <= 1;
}

/** True when the phrase's words appear in a row among the question's words. */
export function mentions(question: string[], phrase: string): boolean {
  const p = words(phrase);
  if (!p.length) return false;
  for (let i = 0; i + p.length <= question.length; i++) {
    if (p.every((w, k) => nearlyEqual(w, question[i + k]))) return true;
  }
  return false;
}

/** The team's knowledge, indexed once; `forQuestion` picks what a question needs. */
export class KnowledgeBase {
  private readonly files: ContextFile[];
  private readonly glossary: GlossaryItem[];
  private readonly examples: VerifiedQueryItem[];
  private readonly exampleIndex: MiniSearch<Doc>;

  private merged: { extra: readonly VerifiedQueryItem[]; kb: KnowledgeBase } | undefined;

  /** `extra`: verified queries approved outside the files (the admin page), used like the files' own. */
  constructor(files: ContextFile[], extra: readonly VerifiedQueryItem[] = []) {
    this.files = files;
    this.glossary = files.flatMap((f) => f.glossary);
    this.examples = [...files.flatMap((f) => f.verified_queries), ...extra];
    this.exampleIndex = new MiniSearch<Doc>({
      fields: ["text"],
      storeFields: [],
      tokenize: (text) => words(text),
      processTerm: (term) => (STOP_WORDS.has(term) ? null : term),
    });
    this.exampleIndex.addAll(this.examples.map((q, id) => ({ id, text: q.question })));
  }

  /** The files and the extra verified queries this base was built from (for a scoped copy). */
  parts(): { files: readonly ContextFile[]; extra: readonly VerifiedQueryItem[] } {
    const own = this.files.flatMap((f) => f.verified_queries).length;
    return { files: this.files, extra: this.examples.slice(own) };
  }

  /** Every authored note: `table` and `table.column` → note (they override the warehouse's descriptions). */
  allNotes(): Record<string, string> {
    const notes: Record<string, string> = {};
    for (const f of this.files) {
      for (const [name, t] of Object.entries(f.tables)) {
        const id = name.includes(".") ? name : `${f.dataset}.${name}`;
        if (t.description) notes[id] = t.description;
        for (const [col, note] of Object.entries(t.columns)) notes[`${id}.${col}`] = note;
      }
    }
    return notes;
  }

  /** The joins the files declare (authored or imported), with warehouse table ids. */
  declaredJoins(): DeclaredJoin[] {
    return this.files.flatMap((f) =>
      f.joins.map((j) => ({
        from: joinEnd(f.dataset, j.from),
        to: joinEnd(f.dataset, j.to),
        cardinality: j.cardinality,
      })),
    );
  }

  /** The verified questions marked `starter: true`, for an empty conversation's first screen. */
  starters(): string[] {
    return this.files.flatMap((f) => f.verified_queries.filter((q) => q.starter).map((q) => q.question));
  }

  get empty(): boolean {
    return this.files.length === 0 && this.examples.length === 0;
  }

  /** This knowledge with more verified queries (indexed once per set). */
  withExamples(extra: readonly VerifiedQueryItem[]): KnowledgeBase {
    if (!extra.length) return this;
    if (this.merged?.extra !== extra) this.merged = { extra, kb: new KnowledgeBase(this.files, extra) };
    return this.merged.kb;
  }

  forQuestion(question: string): Knowledge {
    const asked = words(question);
    const glossary = this.glossary.filter((g) => [g.term, ...g.synonyms].some((t) => mentions(asked, t)));
    const examples = this.exampleIndex
      .search(question, { fuzzy: 0.2, combineWith: "OR" })
      .slice(0, MAX_EXAMPLES)
      .map((r) => this.examples[r.id as number]);
    const text = [question, ...glossary.map((g) => g.sql ?? ""), ...examples.map((e) => e.sql)]
      .join(" ")
      .toLowerCase();
    const notes: Record<string, string> = {};
    for (const f of this.files) {
      for (const [name, t] of Object.entries(f.tables)) {
        const id = name.includes(".") ? name : `${f.dataset}.${name}`;
        const bare = id.split(".").pop()!.toLowerCase();
        if (!text.includes(id.toLowerCase()) && !new RegExp(`\\b${bare}\\b`).test(text)) continue;
        if (t.description) notes[id] = t.description;
        for (const [col, note] of Object.entries(t.columns)) notes[`${id}.${col}`] = note;
      }
    }
    const datasets = [...new Set(this.files.map((f) => f.dataset))];
    return { rules: this.files.flatMap((f) => f.rules), glossary, examples, notes, datasets };
  }
}

/** The knowledge as a prompt block ("" when there is none). Prompt text is data: see KNOWLEDGE_HEADINGS. */
export function renderKnowledge(k: Knowledge): string {
  const sections: [string, string[]][] = [
    [KNOWLEDGE_HEADINGS.rules, k.rules.map((r) => `- ${r}`)],
    [
      KNOWLEDGE_HEADINGS.glossary,
      k.glossary.map(
        (g) =>
          `- ${g.term}${g.synonyms.length ? ` (also: ${g.synonyms.join(", ")})` : ""}: ${g.meaning}` +
          (g.sql ? ` Computed as: ${g.sql}` : ""),
      ),
    ],
    [KNOWLEDGE_HEADINGS.notes, Object.entries(k.notes).map(([name, note]) => `- ${name}: ${note}`)],
    [
      KNOWLEDGE_HEADINGS.examples,
      k.examples.map((e) => `- Question: ${e.question}\n  Verified query: ${e.sql}`),
    ],
  ];
  const body = sections.filter(([, items]) => items.length).map(([h, items]) => `${h}\n${items.join("\n")}`);
  return body.length ? `${body.join("\n")}\n` : "";
}

/** Headings of the knowledge block in prompts. */
export const KNOWLEDGE_HEADINGS = {
  rules: "Rules that always apply (from the team):",
  glossary: "Business terms in this question (use these definitions):",
  notes: "Notes on the tables involved:",
  examples: "Verified queries for similar questions (adapt them; they are known to be right):",
} as const;
