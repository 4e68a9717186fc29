// The Graph explorer: get a token for one of your apps through the real
// OAuth flow with PKCE, build a Graph request, send it, and see the
// response and the equivalent curl command.
import { graph, call, el, replace, onSubmit, APIError } from '/assets/ui/api.js';
import * as tok from './token.js';

document.getElementById('explorer-callback').textContent = tok.callbackURL;
const appSelect = document.getElementById('explorer-app');
let apps = [];

async function loadApps() {
  const res = await graph.get('me/apps', { limit: 100 });
  apps = res.data || [];
  replace(appSelect, apps.map((a) => el('option', { value: a.id }, `${a.name} (${a.id})`)));
  const t = tok.current();
  if (t) appSelect.value = t.appId;
}

function showToken() {
  const t = tok.current();
  const box = document.getElementById('token-state');
  if (!t) { replace(box, el('p', { class: 'empty', id: 'no-token' }, 'No token yet.')); return; }
  const forget = el('button', { type: 'button', class: 'secondary', onclick: () => { tok.forget(); showToken(); } }, 'Forget it');
  // The token itself, masked until clicked (a screen may be shared), as
  // the shell line that sets $TOKEN for the curl command below.
  const shell = `export TOKEN=${shellQuote(t.token)}`;
  const masked = `export TOKEN='${t.token.slice(0, 6)}…' (click to show)`;
  const line = el('code', { id: 'token-value', class: 'masked', title: 'Click to show the token', onclick: () => {
    line.textContent = shell;
    line.classList.remove('masked');
  } }, masked);
  replace(box, el('p', { class: 'ok', id: 'have-token' }, `A user token of app ${t.appId} with scopes ${t.scopes}, until ${new Date(t.expiresAt).toLocaleTimeString()}. `, forget),
    el('p', {}, 'In a shell: ', line));
}

// shellQuote quotes s for a POSIX shell: in single quotes, nothing expands.
function shellQuote(s) { return `'${s.replace(/'/g, `'\\''`)}'`; }

onSubmit(document.getElementById('authorize'), async (v) => {
  const app = apps.find((a) => a.id === v.app);
  if (!app) throw new APIError(400, { message: 'Invalid parameter: app: choose one of your apps.' });
  const verifier = tok.random(48);
  const state = tok.random(16);
  const scope = (v.scope || []).join(' ');
  tok.savePending({ verifier, state, appId: app.id, clientId: app.client_id, scope });
  const u = new URL('/oauth/authorize', location.origin);
  u.search = new URLSearchParams({
    response_type: 'code', client_id: app.client_id, redirect_uri: tok.callbackURL, scope, state,
    code_challenge: await tok.challenge(verifier), code_challenge_method: 'S256', prompt: 'consent',
  }).toString();
  location.assign(u.toString());
});

// curlFor is the request as a curl command: the header in double quotes so
// that the shell expands $TOKEN (set by the line shown with the token),
// everything else in single quotes so that nothing in it expands.
function curlFor(method, url, body) {
  const parts = ['curl', '-X', method, '-H', '"Authorization: Bearer $TOKEN"'];
  if (body !== undefined) parts.push('-H', shellQuote('Content-Type: application/json'), '-d', shellQuote(JSON.stringify(body)));
  parts.push(shellQuote(url));
  return parts.join(' ');
}

onSubmit(document.getElementById('request'), async (v) => {
  const t = tok.current();
  if (!t) throw new APIError(401, { message: 'Get a token first (step 1).' });
  const params = Object.fromEntries(new URLSearchParams(v.params || ''));
  let body;
  if (v.method === 'POST') {
    try { body = v.body ? JSON.parse(v.body) : {}; } catch (x) { throw new APIError(400, { message: `Invalid parameter: body is not JSON: ${x.message}` }); }
  }
  const url = new URL('/api/v1/graph', location.origin);
  url.search = new URLSearchParams({ node: v.node, ...params }).toString();
  const status = document.getElementById('response-status');
  const out = document.getElementById('response-body');
  status.textContent = 'Sending…';
  document.getElementById('curl').textContent = v.method === 'POST'
    ? curlFor('POST', `${location.origin}/api/v1/graph`, { node: v.node, ...params, ...body })
    : curlFor(v.method, url.toString());
  let res;
  try {
    res = v.method === 'POST' ? await graph.post(v.node, { ...params, ...body }, { token: t.token })
      : v.method === 'DELETE' ? await graph.del(v.node, params, { token: t.token })
        : await graph.get(v.node, params, { token: t.token });
    status.textContent = 'HTTP 200';
    status.className = 'ok';
  } catch (err) {
    if (!(err instanceof APIError)) throw err;
    status.textContent = `HTTP ${err.status}`;
    status.className = 'form-error';
    res = { error: err.error };
  }
  out.textContent = JSON.stringify(res, null, 2);
});

async function nodeList() {
  const res = await call('GET', '/api/developers/platform/catalog');
  const nodes = [...new Set((res.data || []).flatMap((p) => p.nodes || []))].sort();
  replace(document.getElementById('node-list'), nodes.map((n) => el('option', { value: n.replace(/^(GET|POST|DELETE) /, '') })));
}

showToken();
loadApps().catch(() => {});
nodeList().catch(() => {});
