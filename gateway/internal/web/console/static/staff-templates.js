// The staff template queue: approve, or reject with a reason.
import { call, el, table, replace, loading, onSubmit } from '/assets/ui/api.js';

const PATH = '/api/developers/admin/svcchat/template-queue';
const box = document.getElementById('queue');

function decide(t) {
  const form = el('form', { class: 'inline', dataset: { template: t.id } },
    el('label', {}, 'Reason ', el('input', { name: 'reason', size: 24 })),
    el('button', { type: 'submit', name: 'decision', value: 'approve' }, 'Approve'),
    el('button', { type: 'submit', name: 'decision', value: 'reject', class: 'danger' }, 'Reject'));
  let decision = 'approve';
  for (const b of form.querySelectorAll('button')) b.addEventListener('click', () => { decision = b.value; });
  onSubmit(form, (v) => call('POST', PATH, { json: { id: t.id, decision, reason: v.reason || '' } }), load);
  return form;
}

async function load() {
  const res = await loading(box, call('GET', PATH));
  replace(box, table([
    ['App', (t) => `${t.appName} (${t.appId})`],
    ['Template', (t) => el('code', {}, t.name)],
    ['Body', (t) => t.body],
    ['Submitted', (t) => t.submittedAt],
    ['Decision', decide],
  ], res.data, 'The queue is empty.'));
}
load().catch(() => {});
