// api.js: the one way the gateway's browser apps call the public APIs.
//
// Every call goes to the same origin with the session cookie; a state
// change also carries the page's CSRF token (from <meta name="svc-csrf">)
// in the X-Svc-CSRF header. A refused request throws an APIError holding
// the Graph error envelope (CONTRACT §3); showError puts its message beside
// the form field the message names.

/** The CSRF token the page was rendered with. */
export function csrfToken() {
  const m = document.querySelector('meta[name="svc-csrf"]');
  return m ? m.content : '';
}

/** A refused request: HTTP status and the envelope's error object. */
export class APIError extends Error {
  constructor(status, error) {
    super((error && error.message) || `HTTP ${status}`);
    this.status = status;
    this.error = error || {};
  }
}

/**
 * call sends one request and answers the decoded JSON body.
 * opts: query (object), json (body object), form (URLSearchParams),
 * token (a bearer token: then no cookie credential is relied on).
 */
export async function call(method, path, opts = {}) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(opts.query || {})) {
    if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, v);
  }
  const headers = { Accept: 'application/json' };
  let body;
  if (opts.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(opts.json);
  } else if (opts.form) {
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    body = opts.form.toString();
  }
  if (opts.token) {
    headers.Authorization = 'Bearer ' + opts.token;
  } else if (method !== 'GET' && method !== 'HEAD') {
    headers['X-Svc-CSRF'] = csrfToken();
  }
  const res = await fetch(url, {
    method, headers, body,
    credentials: opts.token ? 'omit' : 'same-origin',
    cache: 'no-store',
  });
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = { raw: text }; }
  if (!res.ok) {
    // The Graph envelope; OAuth endpoints answer {"error","error_description"}.
    let err = data && data.error;
    if (typeof err === 'string') err = { message: `${err}: ${data.error_description || ''}`, type: err };
    throw new APIError(res.status, err);
  }
  return data;
}

/** The Graph endpoint: graph.get('me/pages', {limit: 5}). */
export const graph = {
  get: (node, params = {}, opts = {}) => call('GET', '/api/v1/graph', { ...opts, query: { node, ...params } }),
  post: (node, body = {}, opts = {}) => call('POST', '/api/v1/graph', { ...opts, json: { node, ...body } }),
  del: (node, params = {}, opts = {}) => call('DELETE', '/api/v1/graph', { ...opts, query: { node, ...params } }),
};

/**
 * fieldOf picks which of names the message is about: the longest name
 * that appears in it as a whole word (the gateway's messages name the
 * field: "Invalid parameter: redirect_uris: …").
 */
export function fieldOf(message, names) {
  let best = '';
  for (const n of names) {
    if (!n || n.length <= best.length) continue;
    const re = new RegExp(`(^|[^A-Za-z0-9_])${n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^A-Za-z0-9_])`);
    if (re.test(message)) best = n;
  }
  return best;
}

/** clearErrors removes the messages shown on form. */
export function clearErrors(form) {
  for (const e of form.querySelectorAll('.field-error, .form-error')) e.remove();
  for (const e of form.querySelectorAll('[aria-invalid]')) e.removeAttribute('aria-invalid');
}

/**
 * showError shows err's message beside the field of form it names, or at
 * the top of the form when it names none.
 */
export function showError(form, err) {
  clearErrors(form);
  const message = err instanceof APIError ? err.message : String(err && err.message || err);
  const named = [...form.elements].filter((e) => e.name && !('plain' in e.dataset));
  const field = fieldOf(message, named.map((e) => e.name));
  const p = el('p', { class: field ? 'field-error' : 'form-error', role: 'alert' }, message);
  if (err instanceof APIError && err.error.code !== undefined) {
    p.dataset.code = err.error.code;
    p.dataset.subcode = err.error.error_subcode;
  }
  if (field) {
    const input = named.find((e) => e.name === field);
    p.dataset.field = field;
    input.setAttribute('aria-invalid', 'true');
    // A field in a step not yet shown (a wizard) is shown with its error.
    for (let f = input.closest('[hidden]'); f; f = f.parentElement && f.parentElement.closest('[hidden]')) f.hidden = false;
    (input.closest('label') || input).after(p);
  } else {
    form.prepend(p);
  }
  return p;
}

/**
 * values reads form into an object: a field with data-kind="list" is
 * split on commas and new lines, "json" is parsed, "number" converted;
 * checkboxes sharing a name become an array of the checked values;
 * empty optional fields are left out, and so are fields marked data-plain
 * (what only the form's plain post carries: its CSRF token, its operation).
 */
export function values(form) {
  const out = {};
  for (const e of form.elements) {
    if (!e.name || e.disabled || e.type === 'submit' || e.type === 'button' || 'plain' in e.dataset) continue;
    const kind = e.dataset.kind;
    if (e.type === 'checkbox') {
      if (kind === 'bool') { out[e.name] = e.checked; continue; }
      out[e.name] = out[e.name] || [];
      if (e.checked) out[e.name].push(e.value);
      continue;
    }
    const v = e.value.trim();
    if (v === '' && kind !== 'list') continue;
    if (kind === 'list') out[e.name] = v.split(/[\n,]/).map((s) => s.trim()).filter(Boolean);
    else if (kind === 'number') out[e.name] = Number(v);
    else if (kind === 'json') {
      try { out[e.name] = JSON.parse(v); } catch (x) { throw new APIError(400, { message: `Invalid parameter: ${e.name} is not JSON: ${x.message}` }); }
    } else out[e.name] = v;
  }
  return out;
}

/**
 * onSubmit runs action(values, form) when form is submitted: the submit
 * button is disabled and the form marked busy meanwhile (progress), and a
 * refusal is shown beside its field. action's result is passed to then.
 */
export function onSubmit(form, action, then) {
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clearErrors(form);
    const button = form.querySelector('[type=submit]');
    form.setAttribute('aria-busy', 'true');
    if (button) button.disabled = true;
    try {
      const result = await action(values(form), form);
      if (then) await then(result, form);
    } catch (err) {
      showError(form, err);
    } finally {
      form.removeAttribute('aria-busy');
      if (button) button.disabled = false;
    }
  });
  // Marks the form as handled here, so that a test clicks only once the
  // module has attached: before that, a click submits the form natively.
  form.dataset.bound = '1';
}

/** el builds an element; children are nodes or text (never parsed as HTML). */
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') e.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

/** table renders rows as a table with the given columns ([title, row => cell]). */
export function table(columns, rows, empty = 'Nothing yet.') {
  if (!rows || rows.length === 0) return el('p', { class: 'empty' }, empty);
  return el('table', {},
    el('thead', {}, el('tr', {}, columns.map(([t]) => el('th', {}, t)))),
    el('tbody', {}, rows.map((r) => el('tr', {}, columns.map(([, f]) => el('td', {}, f(r)))))));
}

/** replace puts nodes in place of container's children. */
export function replace(container, ...nodes) {
  container.replaceChildren(...nodes.flat().filter(Boolean));
}

/** loading shows a progress line in container while promise runs. */
export async function loading(container, promise, text = 'Loading…') {
  replace(container, el('p', { class: 'progress', role: 'status' }, text));
  try {
    return await promise;
  } catch (err) {
    replace(container, el('p', { class: 'form-error', role: 'alert' }, err.message));
    throw err;
  }
}

/** secret shows a value that is displayed once: with a copy button and a warning. */
export function secret(label, value, name) {
  const code = el('code', { class: 'secret', dataset: { secret: name || label } }, value);
  const copy = el('button', { type: 'button', class: 'link', onclick: () => navigator.clipboard && navigator.clipboard.writeText(value) }, 'Copy');
  return el('div', { class: 'once' }, el('strong', {}, label + ': '), code, ' ', copy);
}
