// The Graph explorer's token: obtained through the OAuth code flow with
// PKCE and kept in this browser tab only (sessionStorage), never sent to
// the console's server except as the bearer of the requests it makes.
const KEY = 'svc.console.explorer';

/** The explorer's current token: {appId, token, scopes, expiresAt}, or null. */
export function current() {
  try {
    const t = JSON.parse(sessionStorage.getItem(KEY) || 'null');
    if (t && t.expiresAt && Date.now() > t.expiresAt) return null;
    return t;
  } catch { return null; }
}

/** save keeps the token for this tab. */
export function save(t) { sessionStorage.setItem(KEY, JSON.stringify(t)); }

/** forget drops it. */
export function forget() { sessionStorage.removeItem(KEY); }

/** The pending authorization (verifier, state, app) between the two pages. */
const PENDING = 'svc.console.explorer.pending';
export function savePending(p) { sessionStorage.setItem(PENDING, JSON.stringify(p)); }
export function takePending() {
  const p = JSON.parse(sessionStorage.getItem(PENDING) || 'null');
  sessionStorage.removeItem(PENDING);
  return p;
}

/** callbackURL is the explorer's redirect URI. */
export const callbackURL = `${location.origin}/developers/console/explorer/callback`;

function base64url(bytes) {
  return btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** random returns n random bytes, base64url-encoded. */
export function random(n = 32) { return base64url(crypto.getRandomValues(new Uint8Array(n))); }

/** challenge is the S256 code challenge of verifier (RFC 7636). */
export async function challenge(verifier) {
  if (!crypto.subtle) throw new Error('This page is not a secure context (use https or localhost): the browser cannot compute the PKCE challenge.');
  return base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
}
