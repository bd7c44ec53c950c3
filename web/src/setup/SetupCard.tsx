/**
 * Shown instead of the chat when the server has no usable model: what is wrong, in the server's
 * words, and the ways to get a model — a chat that can only fail would teach nothing.
 */
import { useState } from "react";
import type { ModelSetup } from "../config";

interface Props {
  model: Extract<ModelSetup, { ready: false }>;
  /** Local stack (npm start): commands to run; deployed: where to set things. */
  local: boolean;
}

export function SetupCard({ model, local }: Props) {
  return (
    <section className="chat setup" aria-labelledby="setup-title">
      <div className="setup-card" role="alert">
        <h2 id="setup-title">Connect an AI model to start</h2>
        <p>{model.message}</p>
        {local ? (
          <>
            <p>Stop Quarry (Ctrl-C), start it again with one of these, then reload this page:</p>
            <ol className="setup-options">
              {model.setup.map((o) => (
                <li key={o.provider}>
                  <strong>{o.title}</strong>
                  {o.link && (
                    <>
                      {" "}
                      <a href={o.link} target="_blank" rel="noreferrer">
                        (how to get it)
                      </a>
                    </>
                  )}
                  <CommandLine text={o.command} />
                </li>
              ))}
            </ol>
          </>
        ) : (
          <p>
            The deployed function needs a model: set <code>QUARRY_MODEL_PROVIDER=gemini</code> and the secret
            with <code>firebase functions:secrets:set GEMINI_API_KEY</code>, or grant its service account{" "}
            <code>roles/aiplatform.user</code> for Vertex AI, then deploy again (docs/deploy.md).
          </p>
        )}
      </div>
    </section>
  );
}

function CommandLine({ text }: { text: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="setup-command">
      <code>{text}</code>
      <button
        type="button"
        className="small"
        aria-label={`Copy: ${text}`}
        onClick={() =>
          void navigator.clipboard?.writeText(text).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }
      >
        {copied ? "Copied" : "Copy"}
      </button>
    </div>
  );
}
