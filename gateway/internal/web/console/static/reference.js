// The API reference, rendered from the OpenAPI document the gateway builds
// from the loaded plugins' descriptors (GET /api/v1/openapi.json): each
// plugin's REST paths and Graph nodes (x-svc-nodes) with their parameters,
// body and answer fields (required ones marked) and who may call them,
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

// resolve follows a schema's $ref (and a one-element allOf wrapper) into
// the document's components.
function resolve(doc, s) {
  for (let i = 0; s && i < 20; i++) {
    if (s.$ref) s = doc.components.schemas[s.$ref.replace('#/components/schemas/', '')];
    else if (s.allOf && s.allOf.length === 1) s = { ...s.allOf[0], nullable: s.nullable, description: s.description };
    else break;
  }
  return s || {};
}

// typeOf names a schema's type as a reader wants it: string, integer,
// array of Post, one of 2, Post.
function typeOf(doc, s) {
  if (!s) return '';
  if (s.$ref) return s.$ref.replace('#/components/schemas/', '').replace(/^graph\./, '').split('.').pop();
  if (s.allOf && s.allOf.length === 1) return typeOf(doc, s.allOf[0]);
  if (s.anyOf || s.oneOf) return (s.anyOf || s.oneOf).map((x) => typeOf(doc, x)).join(' | ');
  if (s.type === 'array') return `array of ${typeOf(doc, s.items)}`;
  if (s.enum) return s.enum.filter((v) => v !== '').join(' | ');
  return s.format ? `${s.type} (${s.format})` : (s.type || 'any');
}

// fieldsOf lists an object schema's fields: name, type, whether required.
function fieldsOf(doc, schema) {
  const s = resolve(doc, schema);
  const required = new Set(s.required || []);
  return Object.entries(s.properties || {}).sort(([a], [b]) => (required.has(b) - required.has(a)) || a.localeCompare(b))
    .map(([name, f]) => ({ name, type: typeOf(doc, f) + (f.nullable ? ' or null' : ''), required: required.has(name) }));
}

// fieldList renders fields as a definition-like list; required ones are
// marked, so a reader sees what a call must send.
function fieldList(title, fields) {
  if (!fields.length) return null;
  return el('div', { class: 'fields' }, el('strong', {}, title), ' ',
    fields.map((f) => el('span', { class: 'field', dataset: { required: f.required ? 'true' : 'false' } },
      el('code', {}, f.name), ` ${f.type}${f.required ? ', required' : ''}; `)));
}

// shapes are an operation's parameters, body fields and answer fields.
function shapes(doc, params, body, answer) {
  const p = (params || []).filter((x) => x.in !== 'header').map((x) => ({ name: x.name, type: typeOf(doc, x.schema), required: !!x.required }));
  return [fieldList('Parameters:', p), fieldList('Body:', body ? fieldsOf(doc, body) : []), fieldList('Answer:', answer ? fieldsOf(doc, answer) : [])];
}

function success(op) {
  for (const code of ['200', '201', '202']) {
    const c = op.responses && op.responses[code] && op.responses[code].content;
    if (c && c['application/json']) return c['application/json'].schema;
  }
  return null;
}

function requestSchema(op) {
  const c = op.requestBody && op.requestBody.content;
  if (!c) return null;
  return (c['application/json'] || c['application/x-www-form-urlencoded'] || {}).schema || null;
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
      of(op['x-svc-plugin'] || 'gateway').ops.push({ what: `${verb.toUpperCase()} ${path}`, summary: op.summary || '', who: who(op['x-svc-access']),
        fields: shapes(doc, op.parameters, requestSchema(op), success(op)) });
    }
  }
  for (const n of doc['x-svc-nodes'] || []) {
    of(n.plugin).ops.push({ what: `${n.method} ${n.node}`, summary: n.summary || 'Graph node', who: who(n.access),
      fields: shapes(doc, n.parameters, n.requestBody, n.response) });
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
    p.ops.length ? table([['Node or path', (o) => el('code', {}, o.what)], ['What', (o) => [o.summary, ...o.fields]], ['Who may call', (o) => o.who]], p.ops) : null,
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
