// The wearables portal of an app: its cards, their deliveries, the actions
// wearers confirmed and the devices the cards reached, read from
// app/<id>/wearables_cards and app/<id>/wearables_devices.
import { graph, el, table, replace, loading } from '/assets/ui/api.js';
import { appNode, showApp } from './common.js';

const box = (id) => document.getElementById(id);

async function load() {
  const cardsP = graph.get(appNode('wearables_cards'));
  const res = await loading(box('cards'), cardsP);
  for (const id of ['deliveries', 'actions']) replace(box(id));
  const cards = res.data || [];
  const badge = (c) => el('span', { class: `badge ${c.status}`, dataset: { card: c.id } }, c.status);
  replace(box('cards'), table([
    ['Card', (c) => c.id],
    ['Wearer', (c) => c.user_id],
    ['Title', (c) => c.title],
    ['Actions', (c) => (c.actions || []).map((a) => a.label).join(', ')],
    ['Status', badge],
    ['Pushed', (c) => c.created_at],
  ], cards, 'No cards pushed yet.'));
  replace(box('deliveries'), table([
    ['Card', (c) => c.id],
    ['Device', (c) => c.device_id],
    ['Delivered', (c) => c.delivered_at],
  ], cards.filter((c) => c.delivered_at), 'No card was delivered yet.'));
  replace(box('actions'), table([
    ['Card', (c) => c.id],
    ['Wearer', (c) => c.user_id],
    ['Action', (c) => el('code', { dataset: { card: c.id } }, c.action_id)],
    ['Confirmed', (c) => c.confirmed_at],
  ], cards.filter((c) => c.action_id), 'No action was confirmed yet.'));
  const devices = await loading(box('devices'), graph.get(appNode('wearables_devices')));
  replace(box('devices'), table([
    ['Device', (d) => el('span', { dataset: { device: d.id } }, d.id)],
    ['Wearer', (d) => d.user_id],
    ['Kind', (d) => d.simulated ? 'simulated' : 'glasses'],
    ['Paired', (d) => d.paired_at],
    ['Replaced', (d) => d.replaced_at || ''],
    ['Cards received', (d) => String(d.cards || 0)],
  ], devices.data, 'No device received a card yet.'));
}

showApp(graph.get(appNode())).catch(() => {});
load().catch(() => {});
