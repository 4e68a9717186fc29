// The explorer's redirect URI: checks the state, then has the gateway
// exchange the code with the PKCE verifier on the server
// (POST /api/developers/explorer/token, signed in with the console
// session): the app's client secret never reaches the browser (the
// interface's §5.2c). The answer is the access token, its scopes and
// expiry, which this tab keeps; then back to the explorer.
import { call, el, replace, APIError } from '/assets/ui/api.js';
import * as tok from './token.js';

const stateBox = document.getElementById('callback-state');
const q = new URLSearchParams(location.search);
const pending = tok.takePending();
// The code and verifier stay in this page only until exchanged.
history.replaceState(null, '', location.pathname);

function fail(msg) {
  stateBox.className = 'form-error';
  stateBox.setAttribute('role', 'alert');
  stateBox.removeAttribute('aria-busy');
  replace(stateBox, msg, ' ', el('a', { href: '/developers/console/explorer' }, 'Back to the explorer'));
}

async function exchange() {
  stateBox.textContent = `Authorized app ${pending.appId}. Exchanging the code for a token…`;
  const res = await call('POST', '/api/developers/explorer/token', { json: {
    app_id: pending.appId, code: q.get('code'), code_verifier: pending.verifier, redirect_uri: tok.callbackURL,
  } });
  tok.save({ appId: pending.appId, token: res.access_token, scopes: res.scope || pending.scope,
    expiresAt: Date.now() + (res.expires_in || 3600) * 1000 });
  location.assign('/developers/console/explorer');
}

if (q.get('error')) {
  fail(`The authorization was refused: ${q.get('error')} ${q.get('error_description') || ''}`);
} else if (!pending || q.get('state') !== pending.state) {
  fail('This answer does not match an authorization started in this tab (the state differs).');
} else {
  exchange().catch((err) => fail(`The code could not be exchanged: ${err instanceof APIError ? err.message : String(err)}.`));
}
