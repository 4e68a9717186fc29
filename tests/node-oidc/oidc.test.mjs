// Drives the gateway's OpenID Connect provider with the openid-client
// package, as a Node.js relying party would: discovery, the authorization
// code flow with PKCE S256 (signing in and consenting through the gateway's
// own HTML pages), id_token validation, userinfo, refresh token rotation,
// introspection and revocation.
//
// The test starts the built gateway itself ($SVC_BIN_DIR/gateway, default
// ../../bin/gateway) on a free loopback port with a fresh data folder, so
// on its own embedded PostgreSQL and development seed, and stops it after.
//
//   cd tests/node-oidc && npm ci && node --test
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway } from '../gateway.mjs';
import * as client from 'openid-client';

let gw;
let creds;

before(async () => {
  gw = await startGateway('node-oidc');
  creds = gw.creds;
});

after(async () => { if (gw) await gw.stop(); });

// A tiny browser: cookies per name, manual redirects, forms read from HTML.
class Browser {
  constructor(base) { this.base = new URL(base); this.cookies = new Map(); }

  async fetch(url, init = {}) {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      this.cookies.set(pair.slice(0, i), pair.slice(i + 1));
    }
    return res;
  }

  // follow goes through redirects on the gateway and stops at the first one
  // that leaves it (the client's redirect URI), returning that URL.
  async follow(url, init) {
    let res = await this.fetch(url, init);
    let current = new URL(url);
    while (res.status >= 300 && res.status < 400) {
      const next = new URL(res.headers.get('location'), current);
      if (next.host !== this.base.host) return { redirect: next };
      current = next;
      res = await this.fetch(next);
    }
    return { page: await res.text(), status: res.status, url: current };
  }
}

function decodeEntities(s) {
  return s.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (_, e) => {
    if (e[0] === '#') return String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
    return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[e.toLowerCase()];
  });
}

function readForm(html) {
  const form = /<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  assert.ok(form, `no form in:\n${html}`);
  const fields = new URLSearchParams();
  for (const m of form[2].matchAll(/<input([^>]*)>/gi)) {
    const name = /name="([^"]*)"/.exec(m[1]);
    const value = /value="([^"]*)"/.exec(m[1]);
    if (name) fields.set(decodeEntities(name[1]), value ? decodeEntities(value[1]) : '');
  }
  const buttons = [...form[2].matchAll(/<button[^>]*name="([^"]*)"[^>]*value="([^"]*)"/gi)].map((m) => `${m[1]}=${m[2]}`);
  return { action: decodeEntities(form[1]), fields, buttons };
}

async function submit(browser, at, form, extra) {
  for (const [k, v] of Object.entries(extra)) form.fields.set(k, v);
  return browser.follow(new URL(form.action, at), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form.fields.toString(),
  });
}

// signInAndConsent opens the authorization URL as a user and allows.
async function signInAndConsent(authUrl, user) {
  const browser = new Browser(creds.base_url);
  let step = await browser.follow(authUrl);
  assert.ok(step.page, 'expected the sign-in page');
  assert.match(step.url.pathname, /\/login$/);
  step = await submit(browser, step.url, readForm(step.page), { username: user.username, password: user.password });
  if (step.redirect) return step.redirect;
  const consent = readForm(step.page);
  assert.deepEqual(consent.buttons, ['decision=deny', 'decision=allow']);
  step = await submit(browser, step.url, consent, { decision: 'allow' });
  assert.ok(step.redirect, `consent did not redirect: ${step.status}`);
  return step.redirect;
}

async function configure(auth) {
  return client.discovery(new URL(creds.base_url), creds.app.client_id, undefined, auth, {
    execute: [client.allowInsecureRequests], // the test gateway speaks plain HTTP on loopback
  });
}

test('discovery advertises S256 PKCE, iss on redirects and the RFC 7009/7662 endpoints', async () => {
  const config = await configure(client.ClientSecretBasic(creds.app.client_secret));
  const meta = config.serverMetadata();
  assert.equal(meta.issuer, creds.base_url);
  assert.deepEqual(meta.code_challenge_methods_supported, ['S256']);
  assert.equal(meta.authorization_response_iss_parameter_supported, true);
  assert.ok(meta.revocation_endpoint && meta.introspection_endpoint && meta.jwks_uri && meta.userinfo_endpoint);
});

for (const [name, auth] of [
  ['client_secret_basic', () => client.ClientSecretBasic(creds.app.client_secret)],
  ['client_secret_post', () => client.ClientSecretPost(creds.app.client_secret)],
]) {
  test(`code flow with PKCE, id_token, userinfo, refresh, introspection and revocation (${name})`, async () => {
    const config = await configure(auth());
    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const authUrl = client.buildAuthorizationUrl(config, {
      redirect_uri: creds.app.redirect_uri,
      scope: 'openid public_profile pages:read',
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    const callback = await signInAndConsent(authUrl, creds.users.consumer);
    assert.equal(callback.searchParams.get('iss'), creds.base_url);

    // openid-client checks state, iss (RFC 9207), the PKCE verifier at the
    // token endpoint, and the id_token's signature, issuer, audience and nonce.
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: codeVerifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true,
    });
    const claims = tokens.claims();
    assert.equal(claims.sub, creds.users.consumer.id);
    assert.equal(tokens.token_type.toLowerCase(), 'bearer');
    assert.ok(tokens.refresh_token);

    const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    assert.equal(info.sub, creds.users.consumer.id);

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token);
    assert.notEqual(refreshed.access_token, tokens.access_token);
    assert.notEqual(refreshed.refresh_token, tokens.refresh_token);

    let intro = await client.tokenIntrospection(config, refreshed.access_token);
    assert.equal(intro.active, true);
    assert.equal(intro.sub, creds.users.consumer.id);

    await client.tokenRevocation(config, refreshed.access_token);
    intro = await client.tokenIntrospection(config, refreshed.access_token);
    assert.equal(intro.active, false);

    // The rotated refresh token comes back: refused, and the family is revoked.
    await assert.rejects(client.refreshTokenGrant(config, tokens.refresh_token), (err) => err.error === 'invalid_grant');
    await assert.rejects(client.refreshTokenGrant(config, refreshed.refresh_token), (err) => err.error === 'invalid_grant');
  });
}

test('the code cannot be redeemed without the PKCE verifier', async () => {
  const config = await configure(client.ClientSecretBasic(creds.app.client_secret));
  const codeVerifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const authUrl = client.buildAuthorizationUrl(config, {
    redirect_uri: creds.app.redirect_uri, scope: 'public_profile', state,
    code_challenge: await client.calculatePKCECodeChallenge(codeVerifier), code_challenge_method: 'S256',
  });
  const callback = await signInAndConsent(authUrl, creds.users.owner);
  await assert.rejects(
    client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: client.randomPKCECodeVerifier(), expectedState: state }),
    (err) => err.error === 'invalid_grant',
  );
});
