// One Page: its overview (GET page/<id>), its settings (POST page/<id>:
// published, chat surfacing, the inbox merge; owner or admin) and its
// people (page/<id>/roles: list, invite or change, remove), CONTRACT §16.
// A refusal is shown beside the form or row it concerns (CONTRACT §3).
import { graph, el, table, replace, loading, onSubmit, showError, APIError } from '/assets/ui/api.js';
import { dangerButton } from './common.js';

const pageID = document.body.dataset.pageId;
const node = (edge) => (edge ? `page/${pageID}/${edge}` : `page/${pageID}`);
const me = document.body.dataset.user;
let myRole = '';

async function overview() {
  const box = document.getElementById('overview');
  const p = await loading(box, graph.get(node()));
  myRole = p.role || '';
  document.getElementById('page-crumb').textContent = p.name;
  replace(box, el('dl', {},
    el('dt', {}, 'Name'), el('dd', { id: 'overview-name' }, p.name),
    el('dt', {}, 'Id'), el('dd', {}, el('code', { id: 'overview-id' }, p.id)),
    el('dt', {}, 'Category'), el('dd', {}, p.category || ''),
    el('dt', {}, 'Published'), el('dd', { id: 'overview-published' }, p.published ? 'yes' : 'no'),
    el('dt', {}, 'Your role'), el('dd', { id: 'overview-role' }, myRole)));
  if (new URLSearchParams(location.search).get('created')) {
    box.prepend(el('p', { class: 'ok', role: 'status', id: 'created' }, `Created ${p.name}: publish it below when it is ready.`));
  }
  const form = document.getElementById('settings');
  form.elements.published.checked = !!p.published;
  form.elements.chat_surfacing.checked = !!p.chat_surfacing;
  form.elements.inbox_merge_linked.checked = !!p.inbox_merge_linked;
  const manages = myRole === 'owner' || myRole === 'admin';
  for (const e of form.elements) e.disabled = !manages;
  document.getElementById('settings-note').textContent = manages
    ? 'Owners and admins change the Page\'s settings.'
    : `Only the Page's owners and admins change its settings; you are ${myRole || 'not one of its people'}.`;
}

onSubmit(document.getElementById('settings'), (v) => graph.post(node(), v), async (_, form) => {
  await overview();
  form.append(el('p', { class: 'ok', role: 'status', id: 'settings-saved' }, 'Settings saved.'));
});

// roleForm changes one person's role in place; a refusal (the last owner
// stepping down, an admin granting owner) shows beside its select.
function roleForm(r) {
  const f = el('form', { class: 'inline role-change', dataset: { user: r.user_id } },
    el('label', {}, 'Role', el('select', { name: 'role' },
      ['owner', 'admin', 'editor'].map((x) => el('option', { value: x, selected: x === r.role }, x)))),
    el('button', { type: 'submit', class: 'secondary' }, 'Change'));
  onSubmit(f, (v) => graph.post(node('roles'), { user_id: r.user_id, role: v.role }), () => roles());
  return f;
}

async function roles() {
  const box = document.getElementById('roles');
  const res = await loading(box, graph.get(node('roles')));
  replace(box, table([
    ['Name', (r) => r.name || ''],
    ['User id', (r) => el('code', {}, r.user_id)],
    ['Role', (r) => el('span', { class: 'role', dataset: { user: r.user_id } }, r.role)],
    ['', roleForm],
    ['', (r) => dangerButton(r.user_id === me ? 'Leave the Page' : 'Remove',
      () => graph.del(node(`roles/${r.user_id}`)), async () => {
        if (r.user_id === me) location.assign('/developers/console/pages');
        else await roles();
      })],
  ], res.data, 'Nobody has a role on this Page.'));
}

onSubmit(document.getElementById('add-role'), (v) => graph.post(node('roles'), v), async (_, f) => {
  f.reset();
  await roles();
});

overview().catch((err) => {
  // A Page the person has no role on: say so in the settings too.
  const form = document.getElementById('settings');
  for (const e of form.elements) e.disabled = true;
  showError(form, err instanceof APIError ? err : new APIError(0, { message: String(err) }));
});
roles().catch(() => {});
