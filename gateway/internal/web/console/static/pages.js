// The Pages the person has a role on, and creating one (GET and POST
// me/pages, CONTRACT §16).
import { graph, el, table, replace, loading, onSubmit } from '/assets/ui/api.js';

const list = document.getElementById('pages');

function state(p) {
  return [p.published ? 'published' : 'unpublished', p.chat_surfacing ? 'chat surfacing' : null,
    p.inbox_merge_linked ? 'inbox merge' : null].filter(Boolean).join(', ');
}

async function load() {
  const res = await loading(list, graph.get('me/pages', { limit: 100 }));
  replace(list, table([
    ['Name', (p) => el('a', { href: `/developers/console/pages/${encodeURIComponent(p.id)}`, class: 'page-link' }, p.name)],
    ['Id', (p) => el('code', {}, p.id)],
    ['Category', (p) => p.category || ''],
    ['State', (p) => el('span', { class: `badge ${p.published ? 'live' : ''}` }, state(p))],
    ['Your role', (p) => p.role],
  ], res.data, 'You have no Pages yet: create one below.'));
}

// A new Page opens on its settings, where it is published.
onSubmit(document.getElementById('create-page'), (v) => graph.post('me/pages', v),
  (p) => location.assign(`/developers/console/pages/${encodeURIComponent(p.id)}?created=1`));

load().catch(() => {});
