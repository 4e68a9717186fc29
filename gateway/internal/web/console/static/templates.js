// Message templates of an app (app/<id>/svcchat_templates): draft,
// approve (development) or submit (live), and their status.
import { graph, el, table, replace, loading, onSubmit } from '/assets/ui/api.js';
import { appNode, showApp, dangerButton } from './common.js';

async function load() {
  const box = document.getElementById('templates');
  const res = await loading(box, graph.get(appNode('svcchat_templates'), { limit: 100 }));
  const action = (t, verb) => dangerButton(verb === 'approve' ? 'Approve' : 'Submit for review',
    () => graph.post(appNode(`svcchat_templates/${encodeURIComponent(t.name)}/${verb}`)), load);
  replace(box, table([
    ['Name', (t) => el('code', {}, t.name)],
    ['Body', (t) => t.body],
    ['Parameters', (t) => (t.params || []).join(', ')],
    ['Status', (t) => el('span', { class: `badge ${t.status}`, dataset: { template: t.name } }, t.status)],
    ['', (t) => t.status === 'draft' ? [action(t, 'approve'), ' ', action(t, 'submit')] : (t.rejection_reason || '')],
  ], res.data, 'No templates.'));
  for (const b of box.querySelectorAll('button.danger')) b.className = 'secondary';
}

onSubmit(document.getElementById('draft'), (v) => graph.post(appNode('svcchat_templates'), v), (_, f) => { f.reset(); load(); });

showApp(graph.get(appNode())).catch(() => {});
load().catch(() => {});
