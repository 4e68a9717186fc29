// The owner's view of business portfolios (CONTRACT §17): each business
// the user has a role on, its assets and verification status with staff's
// reason; an admin adds assets and asks for verification. Public APIs
// only: me/business_portfolios, business/<id>, business/<id>/assets,
// business/<id>/verification; the partner program (docs/PARTNERS.md):
// business/<id>'s partner_id, partner/<id> and POST /api/v1/partners.
import { call, graph, el, table, replace, loading, onSubmit } from '/assets/ui/api.js';

const box = document.getElementById('businesses');

// hex is the SHA-256 of a file, hex-encoded: only this metadata is sent,
// never the document.
async function hex(file) {
  const digest = await crypto.subtle.digest('SHA-256', await file.arrayBuffer());
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

function addAssetForm(id) {
  const form = el('form', { class: 'inline add-asset', dataset: { business: id } },
    el('label', {}, 'Type ', el('select', { name: 'type' },
      el('option', { value: 'PAGE' }, 'Page'), el('option', { value: 'APP' }, 'App'), el('option', { value: 'AD_ACCOUNT' }, 'Ad account'))),
    el('label', {}, 'Id ', el('input', { name: 'id', required: true, size: 18 })),
    el('button', { type: 'submit' }, 'Add asset'));
  onSubmit(form, (v) => graph.post(`business/${id}/assets`, v), load);
  return form;
}

function verificationForm(id) {
  const form = el('form', { class: 'verify', dataset: { business: id } },
    el('label', {}, 'Legal name ', el('input', { name: 'legal_name', required: true, maxlength: 200 })),
    el('label', {}, 'Country (ISO code) ', el('input', { name: 'country', required: true, size: 3, placeholder: 'FR' })),
    el('label', {}, 'Document kind ', el('select', { name: 'kind', 'data-plain': '' },
      el('option', { value: 'business_registration' }, 'Business registration'),
      el('option', { value: 'tax_document' }, 'Tax document'),
      el('option', { value: 'utility_bill' }, 'Utility bill'))),
    el('label', {}, 'Document ', el('input', { name: 'document', type: 'file', required: true, 'data-plain': '' })),
    el('p', { class: 'muted' }, 'Only the document\'s SHA-256 is sent, computed in your browser.'),
    el('button', { type: 'submit' }, 'Ask for verification'));
  onSubmit(form, async (v, f) => {
    const file = f.elements.document.files[0];
    const documents = file ? [{ kind: f.elements.kind.value, sha256: await hex(file) }] : [];
    return graph.post(`business/${id}/verification`, { legal_name: v.legal_name, country: v.country, documents });
  }, load);
  return form;
}

// partnerDocs links docs/PARTNERS.md as the console links the docs: the
// reference's docs search.
const partnerDocs = '/developers/console/reference?q=partner+program+tiers';

// partnerProgram is the business's part in the partner program: its tier
// and each criterion with its value when it is a partner (the API gives
// the criteria to the business's people, which the viewer is), else an
// admin's button to register it, the API's refusal shown beside it.
async function partnerProgram(b, admin) {
  const docs = el('p', {}, el('a', { href: partnerDocs, class: 'partner-docs' }, 'How tiers are measured'));
  const part = (...body) => el('div', { class: 'partner' }, el('h3', {}, 'Partner program'), ...body, docs);
  if (!b.partner_id) {
    if (!admin) return part(el('p', { class: 'muted' }, 'Not a partner: an admin of the business can register it.'));
    const form = el('form', { class: 'inline register-partner', dataset: { business: b.id } },
      el('button', { type: 'submit' }, 'Register as a partner'));
    onSubmit(form, () => call('POST', '/api/v1/partners', { json: { business_id: b.id } }), load);
    return part(el('p', { class: 'muted' }, 'Not a partner yet. Tiers follow from measured criteria, never declared.'), form);
  }
  const p = await graph.get(`partner/${b.partner_id}`);
  return part(
    el('p', {}, 'Tier: ', el('span', { class: `badge ${p.tier}`, dataset: { tier: p.tier } }, p.tier), ' ', el('code', {}, `partner/${p.id}`)),
    table([
      ['Criterion', (c) => el('code', {}, c.name)],
      ['Met', (c) => el('span', { class: `badge ${c.met ? 'met' : 'unmet'}`, dataset: { met: String(c.met) } }, c.met ? 'met' : 'not met')],
      ['Value', (c) => c.value],
    ], p.criteria || [], 'No criteria.'));
}

async function business(p) {
  const [b, assets] = await Promise.all([graph.get(`business/${p.id}`), graph.get(`business/${p.id}/assets`)]);
  const status = b.verification_status;
  const admin = p.role === 'admin';
  const partner = await partnerProgram(b, admin);
  return el('section', { class: 'business', dataset: { business: p.id } },
    el('h2', {}, b.name, ' ', el('code', {}, b.id)),
    el('p', {}, 'Verification: ', el('span', { class: `badge ${status}`, dataset: { status } }, status),
      b.verification_reason ? el('span', { class: 'reason' }, ` — ${b.verification_reason}`) : null,
      ` · your role: ${p.role}`),
    table([
      ['Type', (a) => a.type],
      ['Id', (a) => el('code', {}, a.id)],
      ['Name', (a) => a.name || ''],
    ], assets.data, 'No assets yet.'),
    admin ? [el('h3', {}, 'Add an asset you own or administer'), addAssetForm(p.id)] : null,
    admin && (status === 'unverified' || status === 'rejected')
      ? [el('h3', {}, status === 'rejected' ? 'Ask again' : 'Ask for verification'), verificationForm(p.id)] : null,
    partner);
}

async function load() {
  const res = await loading(box, graph.get('me/business_portfolios', { limit: 100 }));
  if (!res.data.length) {
    replace(box, el('p', { class: 'empty' }, 'You have no business yet: create one below.'));
    return;
  }
  replace(box, ...(await Promise.all(res.data.map(business))));
  box.dataset.loaded = '1';
}

onSubmit(document.getElementById('create-business'), (v) => graph.post('me/business_portfolios', v), (_, f) => { f.reset(); return load(); });
load().catch(() => {});
