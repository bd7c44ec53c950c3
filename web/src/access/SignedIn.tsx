/**
 * After sign-in: asks the API who this person is (`GET /me`) and shows the workspace to members
 * and admins, or a no-access card with the server's message to anyone else.
 */
import { signOut, type User } from "firebase/auth";
import type { ClientConfig } from "../config";
import type { FirebaseHandles } from "../firebase";
import { Workspace } from "../Workspace";
import { NoAccess } from "./NoAccess";
import { useMe } from "./useMe";

interface Props {
  cfg: ClientConfig;
  fb: FirebaseHandles;
  user: User;
}

export function SignedIn({ cfg, fb, user }: Props) {
  const me = useMe(cfg.apiUrl, fb.auth);
  const leave = () => {
    // The next person to sign in on this tab must not land in this user's thread.
    window.history.replaceState(null, "", "/");
    void signOut(fb.auth);
  };
  if (me.state === "loading") {
    return (
      <main className="signin">
        <p className="muted" role="status">
          Checking your access…
        </p>
      </main>
    );
  }
  if (me.state === "denied") {
    const title = me.code === "access:not_configured" ? "Quarry is not set up yet" : "No access to Quarry";
    return <NoAccess title={title} message={me.message} email={user.email} onSignOut={leave} />;
  }
  if (me.state === "failed") {
    return (
      <NoAccess
        title="Could not check your access"
        message={me.message}
        email={user.email}
        onSignOut={leave}
        onRetry={me.retry}
      />
    );
  }
  return <Workspace cfg={cfg} fb={fb} user={user} me={me.me} onSignOut={leave} />;
}
