// The staff App Review queue: a decision per app and scope.
import { call, el, table, replace, loading, onSubmit } from '/assets/ui/api.js';

const PATH = '/api/developers/admin/app-review';
const box = document.getElementById('queue');

function decide(r) {
  const form = el('form', { class: 'inline', dataset: { app: r.appId, scope: r.scope } },
    el('label', {}, 'Reason ', el('input', { name: 'reason', size: 24 })),
    el('button', { type: 'submit', value: 'approve' }, 'Approve'),
    el('button', { type: 'submit', value: 'reject', class: 'danger' }, 'Reject'));
  let decision = 'approve';
  for (const b of form.querySelectorAll('button')) b.addEventListener('click', () => { decision = b.value; });
  onSubmit(form, (v) => call('POST', PATH, { json: { appId: r.appId, scope: r.scope, decision, reason: v.reason || '' } }), load);
  return form;
}

async function load() {
  const res = await loading(box, call('GET', PATH));
  replace(box, table([
    ['App', (r) => `${r.appName} (${r.appId})`],
    ['Scope', (r) => el('code', {}, r.scope)],
    ['Use case', (r) => [r.useCase || '', r.privacyPolicyUrl ? el('p', { class: 'muted' }, 'Privacy policy: ', r.privacyPolicyUrl) : null]],
    ['Submitted', (r) => r.submittedAt || ''],
    ['Decision', decide],
  ], res.data, 'The queue is empty.'));
}
load().catch(() => {});
