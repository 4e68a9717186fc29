// The token debugger: GET debug_token?input_token=… with a credential of
// the token's app (CONTRACT §2).
import { graph, el, table, replace, onSubmit, APIError } from '/assets/ui/api.js';
import * as tok from './token.js';

const t = tok.current();
if (t) document.getElementById('input-token').value = t.token;

onSubmit(document.getElementById('debug'), (v) => {
  const bearer = v.app_key || (tok.current() || {}).token;
  if (!bearer) throw new APIError(400, { message: 'Invalid parameter: app_key: paste an app key, or get a token in the Graph explorer first.' });
  return graph.get('debug_token', { input_token: v.input_token }, { token: bearer });
}, (res, form) => {
  form.elements.app_key.value = '';
  const d = res.data || {};
  replace(document.getElementById('debug-result'), table([
    ['Field', (r) => r[0]], ['Value', (r) => el('code', { dataset: { field: r[0] } }, r[1])],
  ], [['is_valid', String(d.is_valid)], ['type', d.type || ''], ['app_id', d.app_id || ''], ['application', d.application || ''],
    ['user_id', d.user_id || ''], ['scopes', (d.scopes || []).join(' ')], ['issued_at', d.issued_at || ''], ['expires_at', d.expires_at || 'never']]));
});
