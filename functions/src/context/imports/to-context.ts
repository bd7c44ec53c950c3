/**
 * An imported layer as Quarry's own context (no new format for the prompt): per dataset, a context
 * file whose glossary holds the metrics (meaning, and the compiled SQL when there is one) and whose
 * table notes hold the descriptions, the columns' notes with their synonyms and allowed values,
 * and the joins the team declared. Authored context wins: an imported term that an authored file
 * already defines (as term or synonym) is left out, and so is an imported note on a table or
 * column an authored file has a note for.
 */
import type { ContextFile, GlossaryItem } from "../authored";
import type { ImportedColumn, ImportedJoin, ImportedLayer, ImportedMetric } from "./types";

const datasetOf = (id: string) => id.slice(0, id.lastIndexOf("."));
const bare = (id: string) => id.slice(id.lastIndexOf(".") + 1);

const CARDINALITY = {
  many_to_one: "many to one",
  one_to_one: "one to one",
  one_to_many: "one to many",
  many_to_many: "many to many",
} as const;

/** A metric as a glossary term: its name in words, its label as a synonym. */
function term(m: ImportedMetric, source: string): GlossaryItem {
  const name = m.name.replace(/[._]/g, " ");
  const synonyms = m.label && m.label.toLowerCase() !== name ? [m.label] : [];
  const meaning =
    `${m.description ?? `The ${m.kind} metric ${m.name}.`} (the team's ${source} metric ${m.name}, ${m.origin.file ?? m.origin.id})` +
    (m.noSql ? ` No SQL is given: ${m.noSql}.` : "");
  return { term: name, synonyms, meaning, ...(m.sql ? { sql: m.sql } : {}) };
}

function columnNote(c: ImportedColumn): string | undefined {
  const parts = [
    c.description,
    c.synonyms?.length ? `Also called: ${c.synonyms.join(", ")}.` : undefined,
    c.values?.length ? `Values: ${c.values.join(", ")}.` : undefined,
  ].filter(Boolean);
  return parts.length ? parts.join(" ") : undefined;
}

function joinNote(j: ImportedJoin): string {
  return `${bare(j.from.table)}.${j.from.column} joins ${j.to.table}.${j.to.column} (${CARDINALITY[j.cardinality]})`;
}

/** The layer's context files, one per dataset, without what `authored` already says. */
export function toContextFiles(layer: ImportedLayer, authored: readonly ContextFile[]): ContextFile[] {
  const taken = new Set(
    authored.flatMap((f) => f.glossary.flatMap((g) => [g.term, ...g.synonyms].map((t) => t.toLowerCase()))),
  );
  const noted = new Set<string>();
  for (const f of authored) {
    for (const [name, t] of Object.entries(f.tables)) {
      const id = (name.includes(".") ? name : `${f.dataset}.${name}`).toLowerCase();
      if (t.description) noted.add(id);
      for (const col of Object.keys(t.columns)) noted.add(`${id}.${col.toLowerCase()}`);
    }
  }
  const files = new Map<string, ContextFile>();
  const fileFor = (dataset: string) =>
    files.get(dataset) ??
    files.set(dataset, { dataset, glossary: [], rules: [], tables: {}, verified_queries: [] }).get(dataset)!;
  for (const t of layer.tables) {
    const id = t.table.toLowerCase();
    const joins = layer.joins.filter((j) => j.from.table === t.table).map(joinNote);
    const description = [t.description, joins.length ? `Joins: ${joins.join("; ")}.` : undefined]
      .filter(Boolean)
      .join(" ");
    const columns: Record<string, string> = {};
    for (const c of t.columns) {
      const note = columnNote(c);
      if (note && !noted.has(`${id}.${c.name.toLowerCase()}`)) columns[c.name] = note;
    }
    const entry: ContextFile["tables"][string] = { columns };
    if (description && !noted.has(id)) entry.description = description;
    if (entry.description || Object.keys(columns).length)
      fileFor(datasetOf(t.table)).tables[bare(t.table)] = entry;
  }
  for (const m of layer.metrics) {
    const g = term(m, layer.source);
    const names = [g.term, ...g.synonyms].map((n) => n.toLowerCase());
    if (names.some((n) => taken.has(n))) continue;
    names.forEach((n) => taken.add(n));
    const dataset = m.tables[0]
      ? datasetOf(m.tables[0])
      : layer.tables[0]
        ? datasetOf(layer.tables[0].table)
        : undefined;
    if (dataset) fileFor(dataset).glossary.push(g);
  }
  for (const rule of layer.rules ?? []) {
    const table = layer.tables.find((t) => rule.includes(` ${t.table} `));
    if (table) fileFor(datasetOf(table.table)).rules.push(rule);
  }
  return [...files.values()];
}
