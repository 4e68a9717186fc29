// Generates a client from the gateway's own OpenAPI document and calls the
// gateway with it, as a TypeScript app would (CONTRACT §20, "The API
// reference is complete"): openapi-typescript turns GET /api/v1/openapi.json
// into types, a small program written against those types with
// openapi-fetch is compiled by tsc (strict: a path, parameter or field the
// document lacks is a compile error), and the compiled program calls the
// running gateway: the OAuth token endpoint (client_credentials), a plugin's
// REST path with that token (the book plugin's posts of the seeded Page), a
// Graph read (the seeded app, with its key), chat completions with
// svc-builtin, and the mobile sign-in.
//
// The test starts the built gateway itself ($SVC_BIN_DIR/gateway, default
// ../../bin/gateway) on a free loopback port with a fresh data folder, so
// on its own embedded PostgreSQL and development seed, and stops it after.
//
//   cd tests/node-openapi && npm ci && node --test
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { startGateway } from '../gateway.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

let gw;
let creds;

before(async () => {
  gw = await startGateway('node-openapi');
  creds = gw.creds;
});

after(async () => { if (gw) await gw.stop(); });

// The program, written against the generated types only.
const program = `
import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

export async function run(baseUrl: string, app: { id: string; client_id: string; client_secret: string; api_key: string },
  pageId: string, owner: { username: string; password: string }) {
  const api = createClient<paths>({ baseUrl });
  const basic = 'Basic ' + btoa(encodeURIComponent(app.client_id) + ':' + encodeURIComponent(app.client_secret));
  const out: Record<string, unknown> = {};

  // The OAuth token endpoint: a system user token for the app.
  const token = await api.POST('/api/oauth/token', {
    headers: { Authorization: basic, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: { grant_type: 'client_credentials' },
    bodySerializer: (b) => new URLSearchParams(b as Record<string, string>).toString(),
  });
  if (!token.data) throw new Error('token: ' + JSON.stringify(token.error));
  const access: string = token.data.access_token;
  out.tokenType = token.data.token_type;
  const bearer = { Authorization: 'Bearer ' + access };

  // A Graph write and read on the seeded Page, and the plugin's REST path.
  const session = await api.POST('/api/mobile/auth/session', { body: { username: owner.username, password: owner.password } });
  if (!session.data) throw new Error('sign-in: ' + JSON.stringify(session.error));
  out.userId = session.data.userId;
  const apps = await api.GET('/api/v1/graph', { params: { query: { node: 'app/' + app.id } }, headers: { Authorization: 'Bearer ' + app.api_key } });
  if (!apps.data) throw new Error('Graph read: ' + JSON.stringify(apps.error));
  out.app = apps.data;
  const rest = await api.GET('/api/v1/pages/{page_id}/posts', { params: { path: { page_id: pageId } }, headers: bearer });
  if (!rest.data) throw new Error('REST: ' + JSON.stringify(rest.error));
  out.posts = rest.data.data;

  // Chat completions with svc-builtin.
  const chat = await api.POST('/v1/chat/completions', {
    headers: { Authorization: 'Bearer ' + app.api_key },
    body: { model: 'svc-builtin', messages: [{ role: 'user', content: 'Hello' }] },
  });
  if (!chat.data) throw new Error('chat: ' + JSON.stringify(chat.error));
  // The document answers JSON, or a text/event-stream when stream is true.
  if (typeof chat.data === 'string') throw new Error('a stream without stream: true');
  out.finish = chat.data.choices[0].finish_reason;
  return out;
}
`;

test('a client generated from the reference compiles and calls the gateway', async () => {
  const docURL = `${creds.base_url}/api/v1/openapi.json`;
  const work = await mkdtemp(path.join(here, '.gen-'));
  try {
    await writeFile(path.join(work, 'schema.d.ts'), astToString(await openapiTS(new URL(docURL))));
    await writeFile(path.join(work, 'client.ts'), program);
    await writeFile(path.join(work, 'package.json'), '{"type":"module"}');
    const tsc = path.join(here, 'node_modules', '.bin', 'tsc');
    try {
      await promisify(execFile)(tsc, ['--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext',
        '--skipLibCheck', '--outDir', work, path.join(work, 'client.ts')],
      { cwd: work });
    } catch (err) {
      assert.fail(`the generated client does not compile:\n${err.stdout}${err.stderr}`);
    }
    const { run } = await import(pathToFileURL(path.join(work, 'client.js')));
    const out = await run(creds.base_url, creds.app, creds.page.id, creds.users.owner);
    assert.equal(out.tokenType, 'Bearer');
    assert.equal(out.userId, creds.users.owner.id);
    assert.equal(out.app.id, creds.app.id);
    assert.ok(Array.isArray(out.posts), JSON.stringify(out));
    assert.equal(out.finish, 'stop');
  } finally {
    await rm(work, { recursive: true, force: true });
  }
});
