// The staff business verification queue: approve or reject each request.
import { call, el, table, replace, loading, onSubmit } from '/assets/ui/api.js';

const PATH = '/api/developers/admin/business-verification';
const box = document.getElementById('queue');

function decide(r) {
  const form = el('form', { class: 'inline', dataset: { business: r.businessId } },
    el('label', {}, 'Reason ', el('input', { name: 'reason', size: 24 })),
    el('button', { type: 'submit', value: 'approve' }, 'Approve'),
    el('button', { type: 'submit', value: 'reject', class: 'danger' }, 'Reject'));
  let decision = 'approve';
  for (const b of form.querySelectorAll('button')) b.addEventListener('click', () => { decision = b.value; });
  onSubmit(form, (v) => call('POST', PATH, { json: { businessId: r.businessId, decision, reason: v.reason || '' } }), load);
  return form;
}

async function load() {
  const res = await loading(box, call('GET', PATH));
  replace(box, table([
    ['Business', (r) => `${r.businessName} (${r.businessId})`],
    ['Legal name', (r) => `${r.legalName}, ${r.country}`],
    ['Documents', (r) => (r.documents || []).map((d) => el('p', {}, d.kind, ': ', el('code', {}, d.sha256)))],
    ['Requested', (r) => r.requestedTime || ''],
    ['Decision', decide],
  ], res.data, 'The queue is empty.'));
}
load().catch(() => {});
