/** Images and PDFs of a question: chips with a remove button in the question box, thumbnails in history. */
import { dataUrl, type Attachment } from "../data/attachments";

function Thumb({ a }: { a: Attachment }) {
  return a.kind === "image" ? (
    <img className="thumb" src={dataUrl(a)} alt={a.name ?? "Attached image"} />
  ) : (
    <span className="pdf-chip" aria-label={`PDF ${a.name ?? ""}`.trim()}>
      PDF {a.name ?? ""}
    </span>
  );
}

/** A question's images and PDFs, as asked (live and after a reload: from the blocks' own data). */
export function AttachmentList({ items }: { items: Attachment[] }) {
  return (
    <ul className="attachments" aria-label="Attachments">
      {items.map((a, i) => (
        <li key={i}>
          <Thumb a={a} />
        </li>
      ))}
    </ul>
  );
}

/** The next question's attachments, each with a remove ×. */
export function AttachmentChips({ items, onRemove }: { items: Attachment[]; onRemove(index: number): void }) {
  if (!items.length) return null;
  return (
    <ul className="attachments pending" aria-label="Attachments of the next question">
      {items.map((a, i) => (
        <li key={i} className="chip">
          <Thumb a={a} />
          {a.kind === "image" && <span className="small">{a.name}</span>}
          <button
            type="button"
            className="link"
            aria-label={`Remove ${a.name ?? a.kind}`}
            onClick={() => onRemove(i)}
          >
            ×
          </button>
        </li>
      ))}
    </ul>
  );
}
