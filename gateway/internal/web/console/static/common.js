// What the console's app pages share.
import { el, showError, APIError } from '/assets/ui/api.js';

/** The app id of the page (from the URL, rendered into <body data-app>). */
export function appID() { return document.body.dataset.app; }

/** appNode is app/<id>, or app/<id>/<edge>. */
export function appNode(edge) {
  const n = `app/${appID()}`;
  return edge ? `${n}/${edge}` : n;
}

/** showApp names the app in the breadcrumb once its read answers. */
export async function showApp(promise) {
  const a = await promise;
  const crumb = document.getElementById('app-name');
  if (crumb) crumb.textContent = a.name;
  return a;
}

/**
 * dangerButton is a button that runs action, then reload; a refusal is
 * shown next to it.
 */
export function dangerButton(label, action, reload) {
  const b = el('button', { type: 'button', class: 'danger' }, label);
  b.addEventListener('click', async () => {
    b.disabled = true;
    try {
      await action();
      await reload();
    } catch (err) {
      b.disabled = false;
      const f = el('form', { class: 'inline' });
      b.after(f);
      showError(f, err instanceof APIError ? err : new APIError(0, { message: String(err) }));
    }
  });
  return b;
}
