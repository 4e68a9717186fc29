// Drives the gateway's chat completions with the official openai npm
// package, unmodified, as a Node.js app would: the model list, a
// completion, a stream with usage, and a refused temperature surfaced as
// the client's own error type, from svc-builtin (CONTRACT §7); and OpenAI's
// whole chat API (CONTRACT §20): a tool-calling conversation, a vision
// request and a json_schema response format, streamed and not, from model
// "agent", routed to the fake upstream of the Go tests (internal/openaitest,
// served by $SVC_BIN_DIR/fake-openai-upstream), which answers as OpenAI's
// published API does.
//
// The test starts the built gateway itself ($SVC_BIN_DIR/gateway, default
// ../../bin/gateway) on a free loopback port with a fresh data folder, so
// on its own embedded PostgreSQL and development seed, and stops it after.
//
//   cd tests/node-openai && npm ci && node --test
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import readline from 'node:readline';
import path from 'node:path';
import OpenAI from 'openai';
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import { binDir, startGateway } from '../gateway.mjs';

let gw;
let upstream;
let client;

before(async () => {
  // The fake upstream prints its base URL first; it stops when its input
  // closes, so it does not outlive this process.
  upstream = spawn(path.join(binDir, 'fake-openai-upstream'), [], { stdio: ['pipe', 'pipe', 'inherit'] });
  const [upstreamURL] = await once(readline.createInterface({ input: upstream.stdout }), 'line');
  gw = await startGateway('node-openai', async (dataDir) => {
    const config = path.join(dataDir, 'gateway.json');
    await writeFile(config, JSON.stringify({ completions: { upstreams: [{ name: 'fake', base_url: upstreamURL, models: ['agent'] }] } }));
    return ['--config', config];
  });
  client = new OpenAI({ baseURL: `${gw.creds.base_url}/v1`, apiKey: gw.creds.app.api_key, maxRetries: 0 });
});

after(async () => {
  if (gw) await gw.stop();
  if (upstream) upstream.kill('SIGTERM');
});

test('the model list always has svc-builtin, then the configured models', async () => {
  const ids = [];
  for await (const m of client.models.list()) ids.push(m.id);
  assert.deepEqual(ids, ['svc-builtin', 'agent']);
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

// complete asks for a completion, streamed (put together by the client's
// own stream helper) or not, and returns it with its x-request-id.
async function complete(streamed, params) {
  if (!streamed) {
    const { data, request_id: requestId } = await client.chat.completions.create(params).withResponse();
    return { c: data, requestId };
  }
  const { data, request_id: requestId } = await client.chat.completions
    .create({ ...params, stream: true, stream_options: { include_usage: true } }).withResponse();
  const c = await ChatCompletionStream.fromReadableStream(data.toReadableStream()).finalChatCompletion();
  return { c, requestId };
}

const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather', description: 'The weather in a city', strict: true,
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  },
};

for (const [model, toolChoice, wantArgs, wantFinal] of [
  ['agent', undefined, '{"city":"fake"}', /^The tool call_fake_get_weather answered \{"temp":21\}$/],
  ['svc-builtin', 'required', '{}', /^Thanks for your message!/],
]) {
  for (const streamed of [false, true]) {
    test(`a tool-calling conversation with ${model}, ${streamed ? 'streamed' : 'not streamed'}`, async () => {
      const messages = [{ role: 'developer', content: 'Use the tools.' }, { role: 'user', content: 'What is the weather in Paris?' }];
      const first = await complete(streamed, { model, messages, tools: [weatherTool], tool_choice: toolChoice, parallel_tool_calls: false });
      assert.ok(first.requestId, 'no x-request-id');
      const choice = first.c.choices[0];
      assert.equal(choice.finish_reason, 'tool_calls');
      assert.equal(choice.message.tool_calls.length, 1);
      const call = choice.message.tool_calls[0];
      assert.equal(call.type, 'function');
      assert.equal(call.function.name, 'get_weather');
      assert.equal(call.function.arguments, wantArgs);
      assert.ok(call.id);
      assert.equal(first.c.usage.total_tokens, first.c.usage.prompt_tokens + first.c.usage.completion_tokens);

      messages.push(choice.message, { role: 'tool', tool_call_id: call.id, content: '{"temp":21}' });
      const final = await complete(streamed, { model, messages, tools: [weatherTool], tool_choice: 'auto' });
      assert.equal(final.c.choices[0].finish_reason, 'stop');
      assert.match(final.c.choices[0].message.content, wantFinal);
    });
  }
}

for (const streamed of [false, true]) {
  test(`a vision request with an image_url part, ${streamed ? 'streamed' : 'not streamed'}`, async () => {
    const { c } = await complete(streamed, {
      model: 'agent',
      messages: [{
        role: 'user',
        content: [
          { type: 'text', text: 'What is in this picture?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } },
        ],
      }],
    });
    assert.equal(c.choices[0].message.content, 'Paris is sunny today.');
    assert.equal(c.choices[0].finish_reason, 'stop');
  });

  test(`a json_schema response format, ${streamed ? 'streamed' : 'not streamed'}`, async () => {
    const { c } = await complete(streamed, {
      model: 'agent',
      messages: [{ role: 'user', content: 'The weather in Paris, as JSON.' }],
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'weather', strict: true,
          schema: { type: 'object', properties: { city: { type: 'string' }, celsius: { type: 'number' } }, required: ['city', 'celsius'], additionalProperties: false },
        },
      },
      seed: 7, logprobs: true, top_logprobs: 2, max_completion_tokens: 50, metadata: { trace: 't1' }, user: 'u1', stop: ['\n\n'],
    });
    assert.deepEqual(JSON.parse(c.choices[0].message.content), { city: 'fake', celsius: 1 });
    assert.equal(c.choices[0].logprobs.content[0].logprob, -0.25);
  });
}

test('a field of the upstream\'s answer no client knows yet comes back', async () => {
  const c = await client.chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: 'Hi' }] });
  assert.deepEqual(c.x_fake_future_field, { kept: [1, 2.5, 'three'] });
});

test('a refusal carries x-request-id as the client\'s request_id', async () => {
  await assert.rejects(
    client.chat.completions.create({ model: 'agent', messages: [] }),
    (err) => err instanceof OpenAI.BadRequestError && typeof err.requestID === 'string' && err.requestID.length > 0,
  );
});
