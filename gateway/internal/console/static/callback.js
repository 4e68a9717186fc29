// The explorer's redirect URI: checks the state, then exchanges the code
// with the PKCE verifier (and the client secret, typed in for this one
// request) at /api/oauth/token, keeps the token for this tab and goes back
// to the explorer.
import { call, el, replace, onSubmit, APIError } from '/assets/ui/api.js';
import * as tok from './token.js';

const stateBox = document.getElementById('callback-state');
const q = new URLSearchParams(location.search);
const pending = tok.takePending();

function fail(msg) {
  stateBox.className = 'form-error';
  stateBox.setAttribute('role', 'alert');
  replace(stateBox, msg, ' ', el('a', { href: '/developers/console/explorer' }, 'Back to the explorer'));
}

if (q.get('error')) {
  fail(`The authorization was refused: ${q.get('error')} ${q.get('error_description') || ''}`);
} else if (!pending || q.get('state') !== pending.state) {
  fail('This answer does not match an authorization started in this tab (the state differs).');
} else {
  stateBox.className = 'ok';
  stateBox.textContent = `Authorized app ${pending.appId}. One more step:`;
  const form = document.getElementById('exchange');
  form.hidden = false;
  // The code and verifier stay in this page only until exchanged.
  history.replaceState(null, '', location.pathname);
  onSubmit(form, (v) => {
    if (!v.client_secret) throw new APIError(400, { message: 'Invalid parameter: client_secret is required.' });
    return call('POST', '/api/oauth/token', { form: new URLSearchParams({
      grant_type: 'authorization_code', code: q.get('code'), redirect_uri: tok.callbackURL,
      client_id: pending.clientId, client_secret: v.client_secret, code_verifier: pending.verifier,
    }) });
  }, (res) => {
    form.reset();
    tok.save({ appId: pending.appId, token: res.access_token, scopes: res.scope || pending.scope,
      expiresAt: Date.now() + (res.expires_in || 3600) * 1000 });
    location.assign('/developers/console/explorer');
  });
}
