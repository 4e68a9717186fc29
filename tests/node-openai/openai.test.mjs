// Drives the gateway's chat completions with the official openai npm
// package, unmodified, as a Node.js app would: the model list, a
// completion, a stream with usage, and a refused temperature surfaced as
// the client's own error type. No upstream is configured, so svc-builtin
// answers (CONTRACT §7).
//
// The test starts the built gateway itself ($SVC_BIN_DIR/gateway, default
// ../../bin/gateway) on a free loopback port with a fresh data folder, so
// on its own embedded PostgreSQL and development seed, and stops it after.
//
//   cd tests/node-openai && npm ci && node --test
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';

const here = path.dirname(fileURLToPath(import.meta.url));
const binDir = process.env.SVC_BIN_DIR || path.resolve(here, '../../bin');

let gateway;
let dataDir;
let client;
let logs = '';

before(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'svc-node-openai-'));
  // Run as root, the embedded PostgreSQL runs as user postgres, which must
  // be able to pass through this folder to its own.
  await chmod(dataDir, 0o711);
  const env = { ...process.env };
  delete env.SVC_DATABASE_URL; // the gateway's own embedded cluster under dataDir
  gateway = spawn(path.join(binDir, 'gateway'), [
    '--addr', '127.0.0.1:0', '--data-dir', dataDir, '--plugins-dir', path.join(binDir, 'plugins'),
  ], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  gateway.stderr.on('data', (b) => { logs += b.toString(); });
  const exited = new Promise((resolve) => gateway.once('exit', (code) => resolve(code)));
  const credsPath = path.join(dataDir, 'dev-credentials.json');
  const deadline = Date.now() + 60_000;
  let creds;
  for (;;) {
    const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r(undefined), 200))]);
    if (code !== undefined) throw new Error(`gateway exited (${code}):\n${logs}`);
    if (Date.now() > deadline) throw new Error(`gateway did not seed within 60 s:\n${logs}`);
    try {
      await stat(credsPath);
      creds = JSON.parse(await readFile(credsPath, 'utf8'));
      const res = await fetch(`${creds.base_url}/healthz`);
      if (res.ok) break;
    } catch { /* not yet */ }
  }
  client = new OpenAI({ baseURL: `${creds.base_url}/v1`, apiKey: creds.app.api_key, maxRetries: 0 });
});

after(async () => {
  if (gateway && gateway.exitCode === null) {
    const done = new Promise((resolve) => gateway.once('exit', resolve));
    gateway.kill('SIGTERM');
    await Promise.race([done, new Promise((r) => setTimeout(r, 20_000))]);
  }
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

test('the model list always has svc-builtin', async () => {
  const ids = [];
  for await (const m of client.models.list()) ids.push(m.id);
  assert.deepEqual(ids, ['svc-builtin']);
});

test('a completion from svc-builtin, with honest usage', async () => {
  const c = await client.chat.completions.create({
    model: 'svc-builtin',
    messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello there' }],
  });
  assert.equal(c.object, 'chat.completion');
  assert.equal(c.choices[0].finish_reason, 'stop');
  assert.match(c.choices[0].message.content, /not a language model/);
  // One per message, plus each word and punctuation mark: (1+2+1) + (1+2).
  assert.equal(c.usage.prompt_tokens, 7);
  assert.equal(c.usage.total_tokens, c.usage.prompt_tokens + c.usage.completion_tokens);
});

test('a stream with usage in its last chunk', async () => {
  const stream = await client.chat.completions.create({
    model: 'svc-builtin',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let usage;
  let chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    assert.equal(chunk.object, 'chat.completion.chunk');
    for (const ch of chunk.choices) text += ch.delta.content ?? '';
    if (chunk.usage) {
      assert.deepEqual(chunk.choices, []);
      usage = chunk.usage;
    }
  }
  assert.ok(chunks > 3, `only ${chunks} chunks`);
  assert.match(text, /^Thanks for your message!/);
  assert.ok(usage && usage.completion_tokens > 0);
  assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
});

test('temperature 2.5 is refused as the client\'s own BadRequestError', async () => {
  await assert.rejects(
    client.chat.completions.create({ model: 'svc-builtin', messages: [{ role: 'user', content: 'x' }], temperature: 2.5 }),
    (err) => {
      assert.ok(err instanceof OpenAI.BadRequestError, `got ${err?.constructor?.name}`);
      assert.equal(err.status, 400);
      assert.equal(err.param, 'temperature');
      assert.equal(err.type, 'invalid_request_error');
      return true;
    },
  );
});

test('an unknown model is the client\'s NotFoundError', async () => {
  await assert.rejects(
    client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }),
    (err) => err instanceof OpenAI.NotFoundError && err.code === 'model_not_found',
  );
});
