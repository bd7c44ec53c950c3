/**
 * An imported layer as Quarry's own context (no new format for the prompt): per dataset, a context
 * file whose glossary holds the metrics (meaning, and the compiled SQL when there is one) and whose
 * table notes hold the descriptions and the columns' notes with their synonyms and allowed values,
 * and whose joins are the joins the team declared. Authored context wins: an imported term that an authored file
 * already defines (as term or synonym) is left out, and so is an imported note on a table or
 * column an authored file has a note for.
 */
import type { ContextFile, GlossaryItem } from "../authored";
import type { ImportedColumn, ImportedLayer, ImportedMetric } from "./types";

const datasetOf = (id: string) => id.slice(0, id.lastIndexOf("."));
const bare = (id: string) => id.slice(id.lastIndexOf(".") + 1);

/** Words too general to bring a metric on their own ("count", "total"). */
const GENERIC = new Set([
  "count",
  "total",
  "sum",
  "average",
  "avg",
  "min",
  "max",
  "number",
  "value",
  "amount",
]);

/**
 * A metric as a glossary term: its name in words (a LookML measure's `view.field` as "view field"),
 * with its label and, for LookML, its field's own words as synonyms (a question says "return
 * rate", not "order items return rate").
 */
function term(m: ImportedMetric, source: ImportedLayer["source"], reviewed: boolean): GlossaryItem {
  const name = m.name.replace(/[._]/g, " ");
  const field = m.name.includes(".")
    ? m.name.slice(m.name.lastIndexOf(".") + 1).replaceAll("_", " ")
    : undefined;
  const synonyms = [
    ...new Set([m.label, field].filter((s): s is string => !!s && s.toLowerCase() !== name)),
  ].filter((s) => !GENERIC.has(s.toLowerCase()));
  const meaning =
    `${m.description ?? `The ${m.kind} metric ${m.name}.`} (the team's ${source} metric ${m.name}, ${m.origin.file ?? m.origin.id})` +
    (m.noSql ? ` No SQL is given: ${m.noSql}.` : "");
  const origin: GlossaryItem["origin"] = {
    source,
    approved: reviewed,
    ...(m.origin.file ? { file: m.origin.file } : {}),
  };
  return { term: name, synonyms, meaning, ...(m.sql ? { sql: m.sql } : {}), origin };
}

function columnNote(c: ImportedColumn): string | undefined {
  const parts = [
    c.description,
    c.synonyms?.length ? `Also called: ${c.synonyms.join(", ")}.` : undefined,
    c.values?.length ? `Values: ${c.values.join(", ")}.` : undefined,
  ].filter(Boolean);
  return parts.length ? parts.join(" ") : undefined;
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
    files
      .set(dataset, { dataset, glossary: [], rules: [], tables: {}, joins: [], verified_queries: [] })
      .get(dataset)!;
  for (const t of layer.tables) {
    const id = t.table.toLowerCase();
    const description = t.description;
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
    const g = term(m, layer.source, !!layer.reviewedBy);
    // Authored (or an earlier import's) names win: the term is left out, a synonym dropped.
    if (taken.has(g.term.toLowerCase())) continue;
    g.synonyms = g.synonyms.filter((n) => !taken.has(n.toLowerCase()));
    for (const n of [g.term, ...g.synonyms]) taken.add(n.toLowerCase());
    const dataset = m.tables[0]
      ? datasetOf(m.tables[0])
      : layer.tables[0]
        ? datasetOf(layer.tables[0].table)
        : undefined;
    if (dataset) fileFor(dataset).glossary.push(g);
  }
  for (const j of layer.joins) {
    fileFor(datasetOf(j.from.table)).joins.push({
      from: `${j.from.table}.${j.from.column}`,
      to: `${j.to.table}.${j.to.column}`,
      cardinality: j.cardinality,
    });
  }
  for (const rule of layer.rules ?? []) {
    const table = layer.tables.find((t) => rule.includes(` ${t.table} `));
    if (table) fileFor(datasetOf(table.table)).rules.push(rule);
  }
  return [...files.values()];
}
