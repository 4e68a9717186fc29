// The staff lens review queue: approve, or reject with a reason.
import { call, el, table, replace, loading, onSubmit } from '/assets/ui/api.js';

const PATH = '/api/developers/admin/lenses/review-queue';
const box = document.getElementById('queue');

function decide(l) {
  const form = el('form', { class: 'inline', dataset: { lens: l.id } },
    el('label', {}, 'Reason ', el('input', { name: 'reason', size: 24 })),
    el('button', { type: 'submit', name: 'decision', value: 'approve' }, 'Approve'),
    el('button', { type: 'submit', name: 'decision', value: 'reject', class: 'danger' }, 'Reject'));
  let decision = 'approve';
  for (const b of form.querySelectorAll('button')) b.addEventListener('click', () => { decision = b.value; });
  onSubmit(form, (v) => call('POST', PATH, { json: { id: l.id, decision, reason: v.reason || '' } }), load);
  return form;
}

async function load() {
  const res = await loading(box, call('GET', PATH));
  replace(box, table([
    ['App', (l) => `${l.appName} (${l.appId})`],
    ['Icon', (l) => el('img', { src: l.iconUrl, alt: '', width: 24, height: 24 })],
    ['Lens', (l) => l.name],
    ['Submitted', (l) => l.submittedAt],
    ['Decision', decide],
  ], res.data, 'The queue is empty.'));
}
load().catch(() => {});
