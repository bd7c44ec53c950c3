/** Firebase Auth error codes in words that say what to do. */
const MESSAGES: Record<string, string> = {
  "auth/invalid-credential": "That email and password do not match. Check them, or create an account.",
  "auth/wrong-password": "That password is not right. Try again.",
  "auth/user-not-found": "No account uses that email. Create an account instead.",
  "auth/email-already-in-use": "An account already uses that email. Sign in instead.",
  "auth/weak-password": "Choose a password of at least 6 characters.",
  "auth/invalid-email": "That email address does not look right.",
  "auth/popup-closed-by-user": "The sign-in window was closed before finishing. Try again.",
  "auth/popup-blocked": "Your browser blocked the sign-in window. Allow pop-ups for this site and try again.",
  "auth/network-request-failed":
    "The sign-in service could not be reached. Check your connection and try again.",
  "auth/too-many-requests": "Too many attempts. Wait a few minutes and try again.",
  "auth/invalid-action-code": "This sign-in link has expired or was already used. Ask for a new one.",
  "auth/operation-not-allowed":
    "This sign-in method is not enabled for this project (Firebase console → Authentication).",
};

/**
 * The words of a refusal by Quarry's sign-in check (an Auth blocking function): Firebase reports it
 * as an internal error whose text carries the function's JSON answer; its message is for people.
 */
function refusedAtTheDoor(e: unknown): string | undefined {
  const text = String((e as Error)?.message ?? "");
  const m = /"message":"((?:[^"\\]|\\.)*)","status":"PERMISSION_DENIED"/.exec(text);
  if (!m) return undefined;
  try {
    return JSON.parse(`"${m[1]}"`) as string;
  } catch {
    return m[1];
  }
}

export function authErrorInWords(e: unknown): string {
  const code = (e as { code?: string })?.code;
  if (code && MESSAGES[code]) return MESSAGES[code];
  const refused = refusedAtTheDoor(e);
  if (refused) return refused;
  return (e as Error)?.message || "Sign-in failed. Try again.";
}
