// The API reference: the platform catalog (plugins, their Graph nodes and
// REST paths, their events, the SDKs), searched in the browser.
import { call, el, table, replace, loading } from '/assets/ui/api.js';

let catalog = [];
const box = document.getElementById('reference');

function render(q) {
  const needle = q.trim().toLowerCase();
  const hit = (s) => !needle || s.toLowerCase().includes(needle);
  const items = catalog.map((p) => ({ ...p, nodes: (p.nodes || []).filter((n) => hit(n) || hit(p.name)),
    events: (p.events || []).filter((e) => hit(e) || hit(p.name)) }))
    .filter((p) => !needle || p.nodes.length || p.events.length || hit(p.name));
  replace(box, items.length ? items.map((p) => el('section', { class: 'card', dataset: { plugin: p.name } },
    el('h2', {}, `${p.name} `, el('span', { class: 'badge' }, p.kind), ' ', el('span', { class: 'muted' }, p.version)),
    p.nodes.length ? table([['Node or path', (n) => el('code', {}, n)]], p.nodes) : null,
    p.events.length ? el('p', {}, 'Events: ', p.events.map((e) => el('code', {}, e, ' '))) : null))
    : el('p', { class: 'empty' }, 'Nothing matches.'));
}

document.getElementById('search-q').addEventListener('input', (e) => render(e.target.value));
document.getElementById('search').addEventListener('submit', (e) => e.preventDefault());

loading(box, call('GET', '/api/developers/platform/catalog')).then((res) => {
  catalog = res.data || [];
  render(document.getElementById('search-q').value);
}).catch(() => {});
