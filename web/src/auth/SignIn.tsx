/**
 * Sign-in. Locally (Auth emulator): email/password and a one-click test user. In production:
 * Google and a passwordless email link.
 */
import { useEffect, useState, type FormEvent } from "react";
import {
  createUserWithEmailAndPassword,
  GoogleAuthProvider,
  isSignInWithEmailLink,
  sendSignInLinkToEmail,
  signInWithEmailAndPassword,
  signInWithEmailLink,
  signInWithPopup,
  browserPopupRedirectResolver,
  type Auth,
} from "firebase/auth";
import { authErrorInWords } from "./auth-errors";

const TEST_USER = { email: "test-user@quarry.local", password: "quarry-test-user" };
const EMAIL_FOR_LINK = "quarry:emailForSignIn";

interface Props {
  auth: Auth;
  local: boolean;
}

/** Signs in with email/password, creating the account when it does not exist yet. */
async function signInOrSignUp(auth: Auth, email: string, password: string, create: boolean) {
  if (create) return createUserWithEmailAndPassword(auth, email, password);
  try {
    return await signInWithEmailAndPassword(auth, email, password);
  } catch (e) {
    const code = (e as { code?: string }).code;
    // The emulator answers an unknown address with user-not-found or invalid-credential.
    if (email === TEST_USER.email && (code === "auth/user-not-found" || code === "auth/invalid-credential")) {
      return createUserWithEmailAndPassword(auth, email, password);
    }
    throw e;
  }
}

/** Runs a sign-in step: busy while it runs, its failure in words. */
type Run = (fn: () => Promise<unknown>) => Promise<void>;

export function SignIn({ auth, local }: Props) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  // Coming back from an email link: finish signing in.
  useEffect(() => {
    if (local || !isSignInWithEmailLink(auth, window.location.href)) return;
    const stored =
      window.localStorage.getItem(EMAIL_FOR_LINK) ?? window.prompt("Confirm your email address") ?? "";
    signInWithEmailLink(auth, stored, window.location.href)
      .then(() => {
        window.localStorage.removeItem(EMAIL_FOR_LINK);
        window.history.replaceState(null, "", "/");
      })
      .catch((e: unknown) => setError(authErrorInWords(e)));
  }, [auth, local]);

  const run: Run = async (fn) => {
    setBusy(true);
    setError(null);
    setNotice(null);
    try {
      await fn();
    } catch (e) {
      setError(authErrorInWords(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="signin">
      <div className="signin-card">
        <h1>Quarry</h1>
        <p className="tagline">Ask your data a question. See the SQL, the rows and a chart.</p>
        {local ? (
          <LocalSignIn auth={auth} busy={busy} run={run} />
        ) : (
          <CloudSignIn auth={auth} busy={busy} run={run} onNotice={setNotice} />
        )}
        {notice && (
          <p role="status" className="notice">
            {notice}
          </p>
        )}
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
      </div>
    </main>
  );
}

/** The Auth emulator's sign-in: a one-click test user, or email and password. */
function LocalSignIn({ auth, busy, run }: { auth: Auth; busy: boolean; run: Run }) {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [mode, setMode] = useState<"signin" | "signup">("signin");

  const onPassword = (e: FormEvent) => {
    e.preventDefault();
    void run(() => signInOrSignUp(auth, email.trim(), password, mode === "signup"));
  };

  return (
    <>
      <button
        type="button"
        className="primary wide"
        disabled={busy}
        onClick={() => void run(() => signInOrSignUp(auth, TEST_USER.email, TEST_USER.password, false))}
      >
        Continue as test user
      </button>
      <p className="muted small">Local emulator: accounts are not real and vanish when the stack stops.</p>
      <form onSubmit={onPassword} aria-label="Sign in with email and password">
        <label htmlFor="email">Email</label>
        <input
          id="email"
          type="email"
          autoComplete="email"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
        />
        <label htmlFor="password">Password</label>
        <input
          id="password"
          type="password"
          autoComplete={mode === "signup" ? "new-password" : "current-password"}
          required
          minLength={6}
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        <button type="submit" className="primary wide" disabled={busy}>
          {mode === "signup" ? "Create account" : "Sign in"}
        </button>
        <button
          type="button"
          className="link"
          onClick={() => setMode(mode === "signup" ? "signin" : "signup")}
        >
          {mode === "signup" ? "I already have an account" : "Create an account instead"}
        </button>
      </form>
    </>
  );
}

/** Production sign-in: Google, or a passwordless link by email. */
function CloudSignIn({
  auth,
  busy,
  run,
  onNotice,
}: {
  auth: Auth;
  busy: boolean;
  run: Run;
  onNotice(notice: string): void;
}) {
  const [email, setEmail] = useState("");

  const onEmailLink = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => {
      await sendSignInLinkToEmail(auth, email.trim(), { url: window.location.origin, handleCodeInApp: true });
      window.localStorage.setItem(EMAIL_FOR_LINK, email.trim());
      onNotice(`We sent a sign-in link to ${email.trim()}. Open it on this device.`);
    });
  };

  return (
    <>
      <button
        type="button"
        className="primary wide"
        disabled={busy}
        onClick={() =>
          void run(() => signInWithPopup(auth, new GoogleAuthProvider(), browserPopupRedirectResolver))
        }
      >
        Sign in with Google
      </button>
      <form onSubmit={onEmailLink} aria-label="Sign in with an email link">
        <label htmlFor="email">Or get a sign-in link by email</label>
        <input
          id="email"
          type="email"
          autoComplete="email"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
        />
        <button type="submit" className="wide" disabled={busy}>
          Email me a link
        </button>
      </form>
    </>
  );
}
