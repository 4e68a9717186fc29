// The person's control over their data (CONTRACT §16): the apps they
// authorized (me/authorized_apps) and removing one, the data deletion
// requests the platform made for them (me/data_deletion_requests), and
// leaving (DELETE ?node=me), after a confirmation step.
import { graph, el, table, replace, loading, onSubmit } from '/assets/ui/api.js';
import { dangerButton } from './common.js';

// Names of the apps seen in this page, for the deletion requests (which
// outlive the authorization).
const names = new Map();

function when(iso) {
  const d = new Date(iso);
  return isNaN(d) ? (iso || '') : d.toLocaleString();
}

async function authorized() {
  const box = document.getElementById('authorized');
  const res = await loading(box, graph.get('me/authorized_apps'));
  for (const a of res.data || []) names.set(a.app_id, a.name);
  replace(box, table([
    ['App', (a) => el('span', { class: 'app-name' }, a.name)],
    ['Id', (a) => el('code', {}, a.app_id)],
    ['Scopes', (a) => (a.scopes || []).map((s) => el('span', { class: 'badge' }, s))],
    ['Granted', (a) => el('time', { datetime: a.granted_time }, when(a.granted_time))],
    ['', (a) => dangerButton('Remove', () => graph.del(`me/authorized_apps/${a.app_id}`), async () => {
      await authorized();
      followDeletions();
    })],
  ], res.data, 'You have not authorized any app.'));
}

async function deletions() {
  const box = document.getElementById('deletions');
  const res = await graph.get('me/data_deletion_requests');
  replace(box, table([
    ['App', (d) => names.get(d.app_id) || `app ${d.app_id}`],
    ['Status', (d) => el('span', { class: `badge ${d.status === 'confirmed' ? 'approved' : d.status}`, dataset: { status: d.status } }, d.status)],
    ['Confirmation code', (d) => (d.confirmation_code ? el('code', { class: 'confirmation' }, d.confirmation_code) : '')],
    ['Status page', (d) => (d.url ? el('code', {}, d.url) : '')],
    ['Requested', (d) => el('time', { datetime: d.requested_time }, when(d.requested_time))],
  ], res.data, 'No app has been asked to delete your data.'));
  return res.data || [];
}

// followDeletions refreshes the requests while one is pending (the app's
// answer comes a moment later), for at most a minute.
let following = null;
function followDeletions() {
  if (following) clearTimeout(following);
  let rounds = 0;
  const tick = async () => {
    following = null;
    let list = [];
    try { list = await deletions(); } catch { /* shown on the next try */ }
    if (list.some((d) => d.status === 'pending') && ++rounds < 60) following = setTimeout(tick, 1000);
  };
  tick();
}

// Leaving: the first button shows the confirmation; only the second one,
// with the box ticked, deletes the account. The session ends with it, so
// the page goes to the sign-in page.
const start = document.getElementById('leave');
const confirm = document.getElementById('leave-confirm');
start.addEventListener('submit', (ev) => {
  ev.preventDefault();
  start.hidden = true;
  confirm.hidden = false;
});
document.getElementById('leave-cancel').addEventListener('click', () => {
  confirm.hidden = true;
  start.hidden = false;
});
onSubmit(confirm, async () => {
  if (!document.getElementById('leave-understood').checked) {
    throw new Error('Tick the box to confirm that you understand leaving cannot be undone.');
  }
  return graph.del('me');
}, () => location.assign('/login?left=1'));

authorized().catch(() => {});
followDeletions();
