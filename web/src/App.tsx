/** Start-up: configuration, Firebase, then sign-in, or (signed in) the access check and the workspace. */
import { useEffect, useState } from "react";
import { onAuthStateChanged, type User } from "firebase/auth";
import { isLocal, loadClientConfig, type ClientConfig } from "./config";
import { initFirebase, type FirebaseHandles } from "./firebase";
import { SignIn } from "./auth/SignIn";
import { SignedIn } from "./access/SignedIn";

type Boot =
  | { stage: "loading" }
  | { stage: "failed"; message: string }
  | { stage: "ready"; cfg: ClientConfig; fb: FirebaseHandles };

export function App() {
  const [boot, setBoot] = useState<Boot>({ stage: "loading" });
  const [user, setUser] = useState<User | null | undefined>(undefined);

  useEffect(() => {
    loadClientConfig()
      .then((cfg) => setBoot({ stage: "ready", cfg, fb: initFirebase(cfg) }))
      .catch((e: unknown) => setBoot({ stage: "failed", message: (e as Error).message }));
  }, []);

  useEffect(() => {
    if (boot.stage !== "ready") return;
    return onAuthStateChanged(boot.fb.auth, setUser);
  }, [boot]);

  if (boot.stage === "failed") {
    return (
      <main className="signin">
        <p role="alert" className="error">
          {boot.message}
        </p>
      </main>
    );
  }
  if (boot.stage === "loading" || user === undefined) {
    return (
      <main className="signin">
        <p className="muted" role="status">
          Loading Quarry…
        </p>
      </main>
    );
  }
  if (!user) return <SignIn auth={boot.fb.auth} local={isLocal(boot.cfg)} />;
  // Keyed by user: signing in as someone else starts from a clean slate.
  return <SignedIn key={user.uid} cfg={boot.cfg} fb={boot.fb} user={user} />;
}
