// The API reference, rendered from the OpenAPI document the gateway builds
// from the loaded plugins' descriptors (GET /api/v1/openapi.json): each
// plugin's REST paths and Graph nodes (x-svc-nodes) with who may call them,
// plus the events of each plugin from the platform catalog, which the
// OpenAPI document does not describe, filtered in the browser. Above it,
// the docs search: GET /api/developers/docs/search?q= (PostgreSQL full-text
// search over the docs and this reference), its hits shown as text.
import { call, el, table, replace, loading, onSubmit } from '/assets/ui/api.js';

let plugins = [];
const box = document.getElementById('reference');
const verbs = ['get', 'post', 'put', 'patch', 'delete'];

// who says who may call an operation, from its x-svc-access.
function who(access) {
  if (!access) return '';
  if (access.public) return 'public';
  const parts = [];
  if (access.staff) parts.push('staff');
  if (access.tokenKinds) parts.push(access.tokenKinds.map((k) => k.replace('TOKEN_KIND_', '').toLowerCase()).join('|'));
  if (access.scopes) parts.push(access.scopes.join(' '));
  if (access.pageRole) parts.push('Page ' + access.pageRole.replace('PAGE_ROLE_', '').toLowerCase());
  if (access.appRole) parts.push('app ' + access.appRole.replace('APP_ROLE_', '').toLowerCase());
  return parts.join(' · ');
}

// byPlugin groups the document's operations and nodes, and the catalog's
// events, by the plugin that serves them.
function byPlugin(doc, catalog) {
  const out = new Map();
  const of = (name) => {
    if (!out.has(name)) out.set(name, { name, version: '', kind: 'plugin', ops: [], events: [] });
    return out.get(name);
  };
  for (const [path, item] of Object.entries(doc.paths || {})) {
    for (const verb of verbs) {
      const op = item[verb];
      if (!op || path === '/api/v1/graph') continue;
      of(op['x-svc-plugin'] || 'gateway').ops.push({ what: `${verb.toUpperCase()} ${path}`, summary: op.summary || '', who: who(op['x-svc-access']) });
    }
  }
  for (const n of doc['x-svc-nodes'] || []) {
    of(n.plugin).ops.push({ what: `${n.method} ${n.node}`, summary: 'Graph node', who: who(n.access) });
  }
  for (const p of catalog) {
    const entry = of(p.name);
    entry.version = p.version || '';
    entry.kind = p.kind || 'plugin';
    entry.events = p.events || [];
  }
  return [...out.values()].sort((a, b) => a.name.localeCompare(b.name));
}

function render(q) {
  const needle = q.trim().toLowerCase();
  const hit = (s) => !needle || s.toLowerCase().includes(needle);
  const items = plugins.map((p) => ({ ...p,
    ops: p.ops.filter((o) => hit(o.what) || hit(o.summary) || hit(o.who) || hit(p.name)),
    events: p.events.filter((e) => hit(e) || hit(p.name)) }))
    .filter((p) => !needle || p.ops.length || p.events.length || hit(p.name));
  replace(box, items.length ? items.map((p) => el('section', { class: 'card', dataset: { plugin: p.name } },
    el('h2', {}, `${p.name} `, el('span', { class: 'badge' }, p.kind), ' ', el('span', { class: 'muted' }, p.version)),
    p.ops.length ? table([['Node or path', (o) => el('code', {}, o.what)], ['What', (o) => o.summary], ['Who may call', (o) => o.who]], p.ops) : null,
    p.events.length ? el('p', {}, 'Events: ', p.events.map((e) => el('code', {}, e, ' '))) : null))
    : el('p', { class: 'empty' }, 'Nothing matches.'));
}

// highlighted renders a ts_headline snippet, whose matches the server
// marks with ** (StartSel and StopSel), as text with <mark> elements: the
// snippet is never parsed as HTML.
function highlighted(snippet) {
  return snippet.split('**').map((part, i) => (i % 2 === 1 ? el('mark', {}, part) : part));
}

// docsHit is one search result: title, where it is, and the passage.
function docsHit(h) {
  const where = h.path.startsWith('/api/') ? el('a', { href: h.path.split('#')[0] }, el('code', {}, h.path)) : el('code', {}, h.path);
  return el('li', { class: 'docs-hit', dataset: { path: h.path } },
    el('strong', { class: 'docs-title' }, h.title), ' ', where,
    el('p', { class: 'docs-snippet' }, highlighted(h.snippet || '')));
}

const results = document.getElementById('docs-results');
onSubmit(document.getElementById('docs-search'), (v) => {
  replace(results, el('p', { class: 'progress', role: 'status' }, 'Searching…'));
  return call('GET', '/api/developers/docs/search', { query: { q: v.q || '' } }).catch((err) => { replace(results); throw err; });
}, (res) => {
  const hits = res.data || [];
  replace(results, hits.length
    ? [el('p', { class: 'muted', role: 'status' }, `${hits.length} result${hits.length === 1 ? '' : 's'}`), el('ol', { class: 'docs-hits' }, hits.map(docsHit))]
    : el('p', { class: 'empty', role: 'status' }, 'No section of the docs matches.'));
});

document.getElementById('search-q').addEventListener('input', (e) => render(e.target.value));
document.getElementById('search').addEventListener('submit', (e) => e.preventDefault());

loading(box, Promise.all([call('GET', '/api/v1/openapi.json'), call('GET', '/api/developers/platform/catalog')])).then(([doc, catalog]) => {
  plugins = byPlugin(doc, catalog.data || []);
  render(document.getElementById('search-q').value);
}).catch(() => {});
