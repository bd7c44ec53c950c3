/**
 * Shown instead of the chat to someone Quarry does not answer: the server's reason in its own
 * words (it names whom to ask), who they are signed in as, and a way to sign out and try another
 * account. Also used when `/me` could not be read at all, with a way to try again.
 */
interface Props {
  title: string;
  message: string;
  email: string | null;
  onSignOut: () => void;
  onRetry?: () => void;
}

export function NoAccess({ title, message, email, onSignOut, onRetry }: Props) {
  return (
    <main className="signin">
      <section className="signin-card access-card" role="alert" aria-labelledby="no-access-title">
        <h1 id="no-access-title">{title}</h1>
        <p className="access-message">{message}</p>
        {email && <p className="muted small">Signed in as {email}.</p>}
        <div className="access-actions">
          {onRetry && (
            <button type="button" onClick={onRetry}>
              Try again
            </button>
          )}
          <button type="button" className="primary" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </section>
    </main>
  );
}
