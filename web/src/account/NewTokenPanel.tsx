/** A token just made: shown this once, with copy buttons and client configuration for `/mcp`. */
import { useState } from "react";
import type { NewToken } from "@quarry/functions/contract";
import { genericConfig, vscodeConfig } from "./mcp-config";

/** A block of text to copy, with its button ("Copied" for a moment after a copy). */
function CopyBlock({ label, text, code }: { label: string; text: string; code?: boolean }) {
  const [copied, setCopied] = useState(false);
  const [failed, setFailed] = useState(false);
  const copy = () =>
    navigator.clipboard.writeText(text).then(
      () => {
        setCopied(true);
        setFailed(false);
        setTimeout(() => setCopied(false), 2000);
      },
      () => setFailed(true),
    );
  return (
    <div className="copy-block">
      <div className="section-head">
        <span className="small">{label}</span>
        <button type="button" className="copy" onClick={() => void copy()} aria-label={`Copy ${label}`}>
          {copied ? "Copied" : "Copy"}
        </button>
      </div>
      {code ? (
        <code aria-label={label} className="token-value">
          {text}
        </code>
      ) : (
        <pre aria-label={label}>{text}</pre>
      )}
      {failed && (
        <p role="alert" className="error small">
          The browser did not allow copying: select the text and copy it yourself.
        </p>
      )}
    </div>
  );
}

export function NewTokenPanel({ made, url, onDone }: { made: NewToken; url: string; onDone: () => void }) {
  return (
    <section className="new-token" aria-label="New token">
      <p>
        <strong>{made.name}</strong>: copy it now — Quarry keeps only its hash and cannot show it again.
      </p>
      <CopyBlock label="Token" text={made.token} code />
      <p className="small muted">
        MCP URL: <code>{url}</code>
      </p>
      <CopyBlock label="MCP client configuration (JSON)" text={genericConfig(url, made.token)} />
      <CopyBlock label="VS Code configuration (.vscode/mcp.json)" text={vscodeConfig(url)} />
      <p className="small muted">VS Code asks for the token once and keeps it in its secret storage.</p>
      <button type="button" onClick={onDone}>
        Done
      </button>
    </section>
  );
}
