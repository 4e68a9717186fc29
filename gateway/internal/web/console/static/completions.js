// The completions playground (POST /v1/chat/completions) and the app's
// usage per day and model (GET app/<id>/completions_usage) as a bar chart.
import { graph, call, el, table, replace, loading, onSubmit, APIError } from '/assets/ui/api.js';
import { appID, appNode, showApp } from './common.js';
import * as tok from './token.js';

function bearer(key) {
  const t = tok.current();
  const b = key || (t && t.appId === appID() ? t.token : '');
  if (!b) throw new APIError(400, { message: 'Invalid parameter: app_key: paste an app key, or get a token for this app in the Graph explorer.' });
  return b;
}

onSubmit(document.getElementById('complete'), async (v, form) => {
  const messages = [];
  if (v.system) messages.push({ role: 'system', content: v.system });
  messages.push({ role: 'user', content: v.user || '' });
  const res = await call('POST', '/v1/chat/completions', { token: bearer(v.app_key),
    json: { model: v.model, messages, temperature: v.temperature } });
  form.elements.app_key.value = '';
  return res;
}, (res) => {
  const c = (res.choices || [])[0] || {};
  document.getElementById('completion').textContent = `${(c.message || {}).content || ''}\n\n(finish_reason ${c.finish_reason}; ${JSON.stringify(res.usage || {})})`;
  usage();
});

async function usage() {
  const box = document.getElementById('usage');
  const since = new Date(Date.now() - 30 * 864e5).toISOString().slice(0, 10);
  const res = await loading(box, graph.get(appNode('completions_usage'), { since }));
  const rows = res.data || [];
  const byDay = new Map();
  for (const r of rows) byDay.set(r.day, (byDay.get(r.day) || 0) + Number(r.total_tokens || 0));
  const max = Math.max(1, ...byDay.values());
  const bars = el('div', { class: 'bars', role: 'img', 'aria-label': 'Tokens per day' },
    [...byDay.entries()].sort().map(([day, n]) => {
      const b = el('div', { title: `${day}: ${n} tokens` });
      b.style.height = `${Math.max(2, (100 * n) / max)}%`; // CSSOM, allowed by the CSP
      return b;
    }));
  replace(box, rows.length ? bars : null, table([
    ['Day', (r) => r.day], ['Model', (r) => r.model], ['Requests', (r) => r.requests],
    ['Prompt', (r) => r.prompt_tokens], ['Completion', (r) => r.completion_tokens], ['Total', (r) => r.total_tokens],
  ], rows, 'No usage yet.'));
}

showApp(graph.get(appNode())).catch(() => {});
usage().catch(() => {});
