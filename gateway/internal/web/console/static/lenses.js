// An app's lenses (app/<id>/lenses): make a draft, edit it, submit it to
// staff review, withdraw it; each with its status and staff's reason.
import { graph, el, table, replace, loading, onSubmit } from '/assets/ui/api.js';
import { appNode, showApp, dangerButton } from './common.js';

const box = document.getElementById('lenses');

function step(l, action, label) {
  const b = dangerButton(label, () => graph.post(appNode(`lenses/${l.id}`), { action }), load);
  b.className = 'secondary';
  b.dataset.lens = l.id;
  b.dataset.action = action;
  return b;
}

// edit is an inline form with the lens's name and icon.
function edit(l) {
  const form = el('form', { class: 'inline', dataset: { lens: l.id } },
    el('input', { name: 'name', value: l.name, size: 12, 'aria-label': 'Name' }),
    el('input', { name: 'icon_url', value: l.icon_url, size: 16, 'aria-label': 'Icon URL' }),
    el('button', { type: 'submit', class: 'secondary' }, 'Save'));
  onSubmit(form, (v) => graph.post(appNode(`lenses/${l.id}`), { action: 'edit', ...v }), load);
  return form;
}

function actions(l) {
  switch (l.status) {
    case 'draft': return [edit(l), ' ', step(l, 'submit', 'Submit for review')];
    case 'rejected': return [el('p', { class: 'muted' }, 'Rejected: ', l.rejection_reason), edit(l)];
    case 'in_review': case 'approved': return step(l, 'withdraw', 'Withdraw');
  }
  return '';
}

async function load() {
  const res = await loading(box, graph.get(appNode('lenses')));
  replace(box, table([
    ['Icon', (l) => el('img', { src: l.icon_url, alt: '', width: 24, height: 24 })],
    ['Name', (l) => l.name],
    ['Status', (l) => el('span', { class: `badge ${l.status}`, dataset: { lens: l.id } }, l.status)],
    ['Submitted', (l) => l.submitted_at || ''],
    ['', actions],
  ], res.data, 'No lenses yet.'));
}

onSubmit(document.getElementById('lens'), (v) => graph.post(appNode('lenses'), v), (_, f) => { f.reset(); load(); });

showApp(graph.get(appNode())).catch(() => {});
load().catch(() => {});
