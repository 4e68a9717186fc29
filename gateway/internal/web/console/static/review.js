// The App Review wizard: choose scopes, describe the use case, submit
// (POST app/<id>/review), and follow each scope's status (GET).
import { graph, el, table, replace, loading, onSubmit } from '/assets/ui/api.js';
import { appNode, showApp } from './common.js';

async function status() {
  const box = document.getElementById('status');
  const res = await loading(box, graph.get(appNode('review')));
  replace(box, table([
    ['Scope', (r) => el('code', {}, r.scope)],
    ['Status', (r) => el('span', { class: `badge ${r.status}`, dataset: { scope: r.scope } }, r.status)],
    ['Reason', (r) => r.reason || ''],
  ], res.data, 'Nothing submitted yet.'));
}

for (const b of document.querySelectorAll('[data-next]')) {
  b.addEventListener('click', () => {
    const next = document.getElementById(b.dataset.next);
    next.hidden = false;
    next.querySelector('input, textarea, button').focus();
  });
}

const form = document.getElementById('review');
onSubmit(form, (v) => graph.post(appNode('review'), v), () => {
  form.append(el('p', { class: 'ok', role: 'status', id: 'submitted' }, 'Submitted. The status of each scope is above.'));
  status();
});

showApp(graph.get(appNode())).catch(() => {});
status().catch(() => {});
