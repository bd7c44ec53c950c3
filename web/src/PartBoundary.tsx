/**
 * Keeps one part of the page from taking the rest down: a render error inside (an answer, an
 * admin section) shows "This part could not be shown" with the error's words, and everything
 * around it keeps working. Built on react-error-boundary.
 */
import type { ReactNode } from "react";
import { ErrorBoundary, type FallbackProps } from "react-error-boundary";

function Fallback({ error, resetErrorBoundary, label }: FallbackProps & { label: string }) {
  const words = error instanceof Error ? error.message : String(error);
  return (
    <div role="alert" className="error part-error" aria-label={`${label} could not be shown`}>
      <p>
        <strong>This part could not be shown</strong> ({label}): {words}
      </p>
      <button type="button" onClick={resetErrorBoundary}>
        Try again
      </button>
    </div>
  );
}

/** Renders `children`, or the fallback naming `label` when they throw while rendering. */
export function PartBoundary({ label, children }: { label: string; children: ReactNode }) {
  return <ErrorBoundary fallbackRender={(p) => <Fallback {...p} label={label} />}>{children}</ErrorBoundary>;
}
