// The app list and app creation (GET/POST me/apps).
import { graph, el, table, replace, loading, onSubmit, secret } from '/assets/ui/api.js';

const list = document.getElementById('apps');

async function load() {
  const res = await loading(list, graph.get('me/apps', { limit: 100 }));
  replace(list, table([
    ['Name', (a) => el('a', { href: `/developers/console/apps/${encodeURIComponent(a.id)}`, class: 'app-link' }, a.name)],
    ['Id', (a) => el('code', {}, a.id)],
    ['Mode', (a) => el('span', { class: `badge ${a.mode}` }, a.mode)],
    ['Your role', (a) => a.role],
  ], res.data, 'You have no apps yet: create one below.'));
}

onSubmit(document.getElementById('create-app'), (v) => graph.post('me/apps', v), (app, form) => {
  form.reset();
  replace(document.getElementById('created'),
    el('p', { class: 'ok', role: 'status' }, `Created ${app.name} (id ${app.id}), in development mode.`),
    secret('Client id', app.client_id, 'client_id'),
    secret('Client secret', app.client_secret, 'client_secret'),
    secret('Webhook secret (the client secret for Standard Webhooks libraries)', app.webhook_secret, 'webhook_secret'),
    secret('App key', app.api_key, 'api_key'),
    el('p', {}, el('a', { href: `/developers/console/apps/${encodeURIComponent(app.id)}`, id: 'open-created' }, 'Open the app’s settings')));
  load();
});

load();
