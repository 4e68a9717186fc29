// An app's settings: overview, the data use checkup, going live, redirect
// URIs, keys, Page links and products, roles, Test Users and configuration, each through its
// app/<id>/… Graph node (CONTRACT §2 and §4).
import { graph, el, table, replace, loading, onSubmit, secret, showError } from '/assets/ui/api.js';
import { appID, appNode, dangerButton, showApp } from './common.js';

const app = appID();
const callback = `${location.origin}/developers/console/explorer/callback`;
document.getElementById('callback-uri').textContent = callback;

async function overview() {
  const a = await loading(document.getElementById('overview'), showApp(graph.get(appNode()), app));
  replace(document.getElementById('overview'), el('dl', {},
    el('dt', {}, 'Name'), el('dd', { id: 'overview-name' }, a.name),
    el('dt', {}, 'Id'), el('dd', {}, el('code', {}, a.id)),
    el('dt', {}, 'Mode'), el('dd', {}, el('span', { class: `badge ${a.mode}`, id: 'app-mode' }, a.mode)),
    el('dt', {}, 'Products'), el('dd', {}, (a.products || []).join(', ') || 'none'),
    el('dt', {}, 'Scopes it may be granted now'), el('dd', {}, (a.scopes || []).join(', '))));
}

onSubmit(document.getElementById('go-live'), (v) => graph.post(appNode(), v), (res) => {
  const key = res.api_key;
  replace(document.getElementById('live-key'), el('p', { class: 'ok', role: 'status' }, 'The app is live.'),
    key ? secret('Live app key', key, 'live_key') : null);
  overview();
});

async function redirects() {
  const box = document.getElementById('redirects');
  const res = await loading(box, graph.get(appNode('redirect_uris')));
  replace(box, table([
    ['URI', (r) => el('code', {}, r.uri)],
    ['', (r) => dangerButton('Remove', () => graph.del(appNode('redirect_uris'), { uri: r.uri }), redirects)],
  ], res.data, 'No redirect URIs.'));
}
onSubmit(document.getElementById('add-redirect'), (v) => graph.post(appNode('redirect_uris'), v), (_, f) => { f.reset(); redirects(); });
document.getElementById('add-callback').addEventListener('click', async () => {
  const form = document.getElementById('add-redirect');
  try { await graph.post(appNode('redirect_uris'), { uri: callback }); redirects(); } catch (err) { showError(form, err); }
});

onSubmit(document.getElementById('rotate-key'), (v) => graph.post(appNode('keys'), v), (res, form) => {
  const kind = form.elements.kind.value;
  replace(document.getElementById('new-key'), secret(kind === 'api_key' ? 'New app key' : 'New client secret', res.value, kind),
    res.webhook_secret ? secret('New webhook secret (the client secret for Standard Webhooks libraries)', res.webhook_secret, 'webhook_secret') : null,
    res.previous_expires_at ? el('p', { class: 'muted' }, `The previous one works until ${res.previous_expires_at}.`) : null);
});

async function links() {
  const box = document.getElementById('links');
  const res = await loading(box, graph.get(appNode('page_links'), { limit: 100 }));
  replace(box, table([
    ['Page', (l) => `${l.page_name} (${l.page_id})`],
    ['Products', (l) => (l.products || []).join(', ')],
    ['', (l) => dangerButton('Unlink', () => graph.del(appNode('page_links'), { page_id: l.page_id }), links)],
  ], res.data, 'No Page is linked.'));
}
async function myPages() {
  const sel = document.getElementById('link-page-id');
  const res = await graph.get('me/pages', { limit: 100 });
  // Only an owner or admin links a Page: an editor's Pages are not offered.
  const linkable = (res.data || []).filter((p) => p.role === 'owner' || p.role === 'admin');
  replace(sel, linkable.map((p) => el('option', { value: p.id }, `${p.name} (${p.id})`)));
}
onSubmit(document.getElementById('link-page'), (v) => graph.post(appNode('page_links'), v), () => links());

async function roles() {
  const box = document.getElementById('roles');
  const res = await loading(box, graph.get(appNode('roles')));
  replace(box, table([
    ['User', (r) => el('code', {}, r.user_id)],
    ['Role', (r) => r.role],
    ['', (r) => dangerButton('Remove', () => graph.del(appNode('roles'), { user_id: r.user_id }), roles)],
  ], res.data));
}
onSubmit(document.getElementById('add-role'), (v) => graph.post(appNode('roles'), v), (_, f) => { f.reset(); roles(); });

async function testUsers() {
  const box = document.getElementById('test-users');
  const res = await loading(box, graph.get(appNode('test_users')));
  replace(box, table([
    ['Id', (u) => el('code', {}, u.id)],
    ['Username', (u) => u.username || ''],
    ['Name', (u) => u.name || ''],
    ['', (u) => dangerButton('Delete', () => graph.del(appNode('test_users'), { user_id: u.id }), testUsers)],
  ], res.data, 'No Test Users.'));
}
onSubmit(document.getElementById('add-test-user'), () => graph.post(appNode('test_users')), (u) => {
  replace(document.getElementById('new-test-user'),
    el('p', { class: 'ok', role: 'status' }, `Test User ${u.id} created.`),
    secret('Username', u.username, 'test_username'), secret('Password', u.password, 'test_password'));
  testUsers();
});

async function config() {
  const res = await graph.get(appNode('config'));
  document.getElementById('config-json').value = JSON.stringify(res.platformConfig || {}, null, 2);
}
onSubmit(document.getElementById('config'), (v) => graph.post(appNode('config'), v), (_, f) => {
  f.append(el('p', { class: 'ok', role: 'status' }, 'Saved.'));
});

// The data use checkup (CONTRACT §17): a textarea per approved scope,
// certified together by a team Admin.
async function checkup() {
  const c = await graph.get(appNode('data_use_checkup'));
  replace(document.getElementById('checkup'), el('dl', {},
    el('dt', {}, 'Status'), el('dd', {}, el('span', { class: `badge ${c.status}`, id: 'checkup-status' }, c.status)),
    c.due_time ? el('dt', {}, 'Due') : null, c.due_time ? el('dd', { id: 'checkup-due' }, c.due_time) : null));
  replace(document.getElementById('checkup-uses'), (c.scopes || []).map((scope) =>
    el('label', {}, `How the app uses ${scope}`, el('textarea', { name: scope, 'data-scope': scope, rows: 2 }))));
}
onSubmit(document.getElementById('certify-checkup'), (_, form) => {
  const uses = {};
  for (const t of form.querySelectorAll('textarea[data-scope]')) uses[t.dataset.scope] = t.value;
  return graph.post(appNode('data_use_checkup'), { certify: true, uses });
}, (_, form) => {
  form.append(el('p', { class: 'ok', role: 'status' }, 'Certified.'));
  document.getElementById('checkup-notice')?.remove();
  checkup();
});

// Each section loads on its own: one refused read (a role that may not
// see it, a node not served yet) shows its message and leaves the others.
for (const load of [overview, checkup, redirects, links, myPages, roles, testUsers, config]) load().catch(() => {});
