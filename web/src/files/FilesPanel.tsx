/**
 * The conversation's files as tables: each with the name the questions use (`uploads.<name>`), its
 * rows, columns and types, the first rows, the warnings it was read with and a Delete button;
 * uploads under way and refusals in words; for a workbook, the sheet read and the others to pick.
 */
import type { UploadedFile } from "@quarry/functions/contract";
import { formatBytes, formatCount } from "../data/format";
import type { FilesApi, PendingUpload } from "./useFiles";

function stageInWords({ name, stage }: PendingUpload): string {
  switch (stage.stage) {
    case "compressing":
      return `Compressing ${name}…`;
    case "sending":
      return `Uploading ${name}… ${stage.percent}%`;
    case "reading":
      return `Reading ${name} into a table…`;
  }
}

const cell = (v: unknown) =>
  v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v);

/** The first rows of a file, as read. */
function Preview({ file }: { file: UploadedFile }) {
  if (!file.preview.length) return null;
  return (
    <div className="table-wrap">
      <table className="file-preview">
        <caption className="sr-only">First rows of {file.file}</caption>
        <thead>
          <tr>
            {file.columns.map((c) => (
              <th key={c.name} scope="col">
                {c.name}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {file.preview.map((row, i) => (
            <tr key={i}>
              {file.columns.map((c) => (
                <td key={c.name}>{cell((row as Record<string, unknown>)[c.name])}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A workbook's sheet read, and the others offered (when the page still holds its bytes). */
function Sheets({ file, api }: { file: UploadedFile; api: FilesApi }) {
  if (!file.sheets || file.sheets.length < 2) return null;
  const others = file.sheets.filter((s) => s !== file.sheet);
  return (
    <p className="small">
      Read the sheet <strong>{file.sheet}</strong>.{" "}
      {api.canPickSheet(file.name) ? (
        <label>
          Read another sheet instead:{" "}
          <select value="" onChange={(e) => e.target.value && void api.pickSheet(file.name, e.target.value)}>
            <option value="">Choose…</option>
            {others.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      ) : (
        <>Other sheets: {others.join(", ")} (bring the file again to read one).</>
      )}
    </p>
  );
}

function FileView({ file, api }: { file: UploadedFile; api: FilesApi }) {
  return (
    <li className="file">
      <details>
        <summary>
          <code>{file.table}</code> <span className="muted small">{file.file}</span> ·{" "}
          {formatCount(file.rows)} rows · {file.columns.length} columns · {formatBytes(file.bytes)}
        </summary>
        <ul className="columns small" aria-label={`Columns of ${file.table}`}>
          {file.columns.map((c) => (
            <li key={c.name}>
              {c.name} <span className="muted">{c.type}</span>
            </li>
          ))}
        </ul>
        <Sheets file={file} api={api} />
        {file.dialect && <p className="small muted">Read as: {file.dialect}</p>}
        <Preview file={file} />
      </details>
      {file.warnings.length > 0 && (
        <ul className="warnings small" aria-label={`Warnings for ${file.file}`}>
          {file.warnings.map((w) => (
            <li key={w}>{w}</li>
          ))}
        </ul>
      )}
      <button type="button" className="link small danger" onClick={() => void api.remove(file.name)}>
        Delete {file.file}
      </button>
    </li>
  );
}

/** The files panel; nothing when the conversation has no files and nothing is under way. */
export function FilesPanel({ api }: { api: FilesApi }) {
  if (!api.files.length && !api.pending.length && !api.errors.length) return null;
  return (
    <section className="files" aria-label="Files in this conversation">
      <h2 className="small">Files in this conversation</h2>
      {api.pending.map((p) => (
        <p key={p.id} role="status" className="small">
          {stageInWords(p)}
        </p>
      ))}
      {api.errors.map((e) => (
        <p key={e.id} role="alert" className="error small">
          {e.message}{" "}
          <button type="button" className="link small" onClick={() => api.dismiss(e.id)}>
            Dismiss
          </button>
        </p>
      ))}
      <ul className="file-list">
        {api.files.map((f) => (
          <FileView key={f.name} file={f} api={api} />
        ))}
      </ul>
    </section>
  );
}
