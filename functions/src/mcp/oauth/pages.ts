/**
 * The authorization server's two pages (pure HTML builders): sign in with Firebase, then allow the
 * client. The sign-in page calls Firebase Auth's REST API (the Identity Toolkit the JS SDK calls;
 * locally the Auth emulator) in the browser and posts only the resulting ID token back — Quarry
 * never sees the password. Without script, nothing is posted.
 */

import { clientHost } from "../../access/oauth-grants";

export interface LoginPage {
  /** Where the form posts the ID token. */
  action: string;
  /** The Identity Toolkit's base, e.g. `https://identitytoolkit.googleapis.com/v1`. */
  identityToolkit: string;
  apiKey: string;
  clientName: string;
  clientId: string;
  error?: string;
}

export interface ConsentPage {
  action: string;
  abortAction: string;
  clientName: string;
  clientId: string;
  email?: string;
}

const STYLE = `body{font:16px system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem;color:#222}
label{display:block;margin:.75rem 0}input{width:100%;padding:.5rem;font:inherit;box-sizing:border-box}
button{padding:.5rem 1rem;font:inherit;margin-right:.5rem}.error{color:#b00020}code{word-break:break-all}`;

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Who a client is: the host of its client ID (its metadata document's URL) beside the name it chose
 * for itself, which anyone may choose ("Claude"): the host is what the person can trust.
 */
function clientLabel(p: { clientName: string; clientId: string }): string {
  const host = clientHost(p.clientId);
  const name =
    p.clientName && p.clientName !== p.clientId ? `<strong>${escapeHtml(p.clientName)}</strong> ` : "";
  return `${name}(<span class="client-host">${escapeHtml(host)}</span>)`;
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`;
}

/** The sign-in page: email and password to Firebase Auth, then the ID token to `action`. */
export function loginPage(p: LoginPage): string {
  const signIn = `${p.identityToolkit}/accounts:signInWithPassword?key=${encodeURIComponent(p.apiKey)}`;
  return page(
    "Sign in to Quarry",
    `<h1>Sign in to Quarry</h1>
<p>${clientLabel(p)} wants to ask Quarry questions as you.</p>
${p.error ? `<p class="error" role="alert">${escapeHtml(p.error)}</p>` : ""}
<form id="signin" data-sign-in="${escapeHtml(signIn)}">
<label>Email <input name="email" type="email" autocomplete="username" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button></form>
<p class="error" id="problem" role="alert"></p>
<form id="done" method="post" action="${escapeHtml(p.action)}"><input type="hidden" name="id_token"></form>
<script>
document.getElementById("signin").addEventListener("submit", async (e) => {
  e.preventDefault();
  const f = e.target, problem = document.getElementById("problem");
  problem.textContent = "";
  const r = await fetch(f.dataset.signIn, { method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: f.email.value, password: f.password.value, returnSecureToken: true }) });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) { problem.textContent = "Sign-in failed: " + ((body.error && body.error.message) || r.status); return; }
  const done = document.getElementById("done");
  done.id_token.value = body.idToken;
  done.submit();
});
</script>`,
  );
}

/** The consent page: who asks, for what, as whom; Allow posts to `action`, Deny to `abortAction`. */
export function consentPage(p: ConsentPage): string {
  return page(
    "Allow access to Quarry",
    `<h1>Allow ${escapeHtml(p.clientName)}?</h1>
<p>${clientLabel(p)} (<code>${escapeHtml(p.clientId)}</code>) asks to use Quarry's MCP tools
as ${p.email ? `<strong>${escapeHtml(p.email)}</strong>` : "you"}: ask questions, list and describe your tables, run
read-only SQL and search the team's context, under your access, quotas and audit (scope <code>mcp</code>).</p>
<form method="post" action="${escapeHtml(p.action)}"><button type="submit" name="allow" value="yes">Allow</button></form>
<form method="post" action="${escapeHtml(p.abortAction)}"><button type="submit">Deny</button></form>`,
  );
}

/** A dead end (an expired or unknown login), with what to do. */
export function errorPage(message: string): string {
  return page("Quarry sign-in", `<h1>Sign-in stopped</h1><p class="error">${escapeHtml(message)}</p>`);
}
