/** The team's definitions an answer's SQL used, each with where it was written and whether it was reviewed. */
import type { DefinitionUse } from "@quarry/functions/contract";

const SOURCE = { authored: "Quarry context", dbt: "dbt", lookml: "LookML" } as const;

export function DefinitionsUsed({ definitions }: { definitions: DefinitionUse[] }) {
  return (
    <section className="definitions" aria-label="Team definitions used">
      <h3>Team definitions used</h3>
      <ul>
        {definitions.map((d) => (
          <li key={`${d.source}:${d.name}`}>
            <strong>{d.name}</strong>{" "}
            <span className="muted">
              — {SOURCE[d.source]}
              {d.file ? ` (${d.file})` : ""}
              {d.approved
                ? d.source === "authored"
                  ? ""
                  : ", imported and reviewed in Quarry"
                : ", imported: not reviewed in Quarry"}
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}
