// An app's webhooks: the subscription (saved after the handshake), test
// events, the delivery log with every attempt, and replay. Deliveries run
// in the background, so sending and replaying follow the new delivery
// until it is no longer pending, showing its progress.
import { graph, call, el, table, replace, loading, onSubmit } from '/assets/ui/api.js';
import { appNode, showApp, dangerButton } from './common.js';

let filter = {};

async function eventTypes() {
  const res = await call('GET', '/api/developers/platform/catalog');
  const types = [...new Set((res.data || []).flatMap((p) => p.events || []))].sort();
  replace(document.getElementById('event-type-list'), types.map((t) => el('option', { value: t })));
  replace(document.getElementById('event-types'), el('legend', {}, 'Events'),
    types.map((t) => el('label', { class: 'check' }, el('input', { type: 'checkbox', name: 'events', value: t }), ' ', t)));
  return types;
}

async function subscription() {
  const box = document.getElementById('subscription');
  const res = await loading(box, graph.get(appNode('subscriptions')));
  const s = (res.data || [])[0];
  if (!s) { replace(box, el('p', { class: 'empty' }, 'No subscription yet.')); return; }
  replace(box, el('p', {}, 'Delivering ', el('code', { id: 'subscribed-events' }, (s.events || []).join(', ')), ' to ',
    el('code', { id: 'subscribed-url' }, s.callback_url), ' ',
    el('span', { class: `badge ${s.active ? 'succeeded' : 'failed'}` }, s.active ? 'active' : 'disabled after failing'), ' ',
    dangerButton('Delete', () => graph.del(appNode('subscriptions')), subscription)));
  const form = document.getElementById('subscribe');
  form.elements.callback_url.value = s.callback_url;
  for (const c of form.querySelectorAll('input[name=events]')) c.checked = (s.events || []).includes(c.value);
}

const subscribe = document.getElementById('subscribe');
onSubmit(subscribe, (v) => {
  subscribe.querySelector('[type=submit]').textContent = 'Verifying your callback URL…';
  return graph.post(appNode('subscriptions'), v).finally(() => {
    subscribe.querySelector('[type=submit]').textContent = 'Save and verify';
  });
}, () => {
  subscribe.append(el('p', { class: 'ok', role: 'status', id: 'subscribed' }, 'Verified and saved.'));
  subscription();
});

/** follow polls the delivery with id until it is no longer pending. */
async function follow(box, match, what) {
  const line = el('p', { class: 'progress', role: 'status' }, `${what}: waiting for the delivery…`);
  replace(box, line);
  for (let i = 0; i < 120; i++) {
    const res = await graph.get(appNode('deliveries'), { limit: 50 });
    const d = (res.data || []).find(match);
    if (d) {
      const n = (d.attempts || []).length;
      line.textContent = `${what}: delivery ${d.id} ${d.status}, ${n} attempt${n === 1 ? '' : 's'}`;
      if (d.status !== 'pending') {
        line.className = d.status === 'succeeded' ? 'ok' : 'form-error';
        line.dataset.status = d.status;
        line.dataset.delivery = d.id;
        deliveries();
        return d;
      }
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  line.textContent = `${what}: still pending; see the log below.`;
  return null;
}

onSubmit(document.getElementById('test-event'), (v) => graph.post(appNode('test_event'), v),
  (res) => { follow(document.getElementById('test-result'), (d) => d.event_id === res.id, `Test event ${res.id}`); });

function attempts(d) {
  return table([
    ['At', (a) => a.at],
    ['Status', (a) => String(a.status_code || '')],
    ['Latency', (a) => `${a.latency_ms} ms`],
    ['Error', (a) => a.error || ''],
    ['Response', (a) => el('code', {}, a.response_excerpt || '')],
  ], d.attempts, 'No attempt yet.');
}

async function deliveries() {
  const box = document.getElementById('deliveries');
  const res = await loading(box, graph.get(appNode('deliveries'), { limit: 50, ...filter }));
  replace(box, table([
    ['Delivery', (d) => el('code', {}, d.id)],
    ['Event', (d) => [el('code', {}, d.event_id), ' ', d.event_type]],
    ['Status', (d) => el('span', { class: `badge ${d.status}`, dataset: { delivery: d.id } }, d.status)],
    ['Attempts', (d) => el('details', {}, el('summary', {}, `${(d.attempts || []).length}`), attempts(d))],
    ['', (d) => replayButton(d)],
  ], res.data, 'No deliveries yet.'));
}

function replayButton(d) {
  const b = el('button', { type: 'button', class: 'secondary', dataset: { replay: d.id } }, 'Replay');
  b.addEventListener('click', async () => {
    b.disabled = true;
    const out = document.getElementById('test-result');
    try {
      const res = await graph.post(`delivery/${d.id}/replay`);
      await follow(out, (x) => x.id === res.id, `Replay of ${d.id} as ${res.id}`);
    } catch (err) {
      replace(out, el('p', { class: 'form-error', role: 'alert' }, err.message));
    } finally {
      b.disabled = false;
    }
  });
  return b;
}

onSubmit(document.getElementById('filter'), (v) => { filter = v; return deliveries(); });

showApp(graph.get(appNode())).catch(() => {});
eventTypes().then(subscription).catch(() => {});
deliveries().catch(() => {});
