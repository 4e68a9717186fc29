// A webhook receiver that verifies both signatures of a delivery, using
// only Node's standard library (docs/WEBHOOKS.md).
//
//   SVC_CLIENT_SECRET=…         checks X-Svc-Signature-256 (the app's client secret)
//   SVC_WEBHOOK_SECRET=whsec_…  checks webhook-signature (Standard Webhooks)
//   SVC_VERIFY_TOKEN=…          answers the subscription handshake
//   PORT=3000                   listens on 127.0.0.1:PORT (0: any free port)
//
// Set one secret or both; every one set must verify. It prints one line per
// request: "listening on …", then "accepted <id> <type>", "duplicate <id>"
// or "refused: <reason>".
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

// How far webhook-timestamp may be from now, in seconds.
const TOLERANCE = 5 * 60;

function same(a, b) {
  const x = Buffer.from(a), y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

// X-Svc-Signature-256: "sha256=" and the lowercase hex HMAC-SHA256 of the
// raw body, keyed by the client secret.
export function verifySvcSignature(clientSecret, body, header) {
  const want = 'sha256=' + createHmac('sha256', clientSecret).update(body).digest('hex');
  if (!same(header || '', want)) throw new Error('X-Svc-Signature-256 does not match the body');
}

// webhook-signature: one or more space-separated "v1,<base64 HMAC-SHA256
// of id.timestamp.body>", keyed by the base64-decoded part of the whsec_
// key; webhook-timestamp within TOLERANCE of now.
export function verifyStandardWebhook(key, headers, body, now = Date.now() / 1000) {
  const secret = Buffer.from(key.replace(/^whsec_/, ''), 'base64');
  const id = headers['webhook-id'], ts = headers['webhook-timestamp'];
  if (!id || !/^\d+$/.test(ts || '')) throw new Error('webhook-id or webhook-timestamp missing');
  if (Math.abs(now - Number(ts)) > TOLERANCE) throw new Error('webhook-timestamp is too far from now');
  const want = createHmac('sha256', secret).update(`${id}.${ts}.`).update(body).digest('base64');
  const ok = (headers['webhook-signature'] || '').split(' ')
    .some((sig) => sig.startsWith('v1,') && same(sig.slice(3), want));
  if (!ok) throw new Error('webhook-signature does not match');
}

// The event ids already handled: deliveries come at least once, so the
// same id may come again. Keep them in your database.
const seen = new Set();

const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://localhost');
  if (req.method === 'GET') { // the subscription handshake
    const q = url.searchParams;
    if (q.get('hub.mode') !== 'subscribe' || q.get('hub.verify_token') !== process.env.SVC_VERIFY_TOKEN) {
      res.writeHead(403).end('wrong verify token');
      return;
    }
    res.end(q.get('hub.challenge'));
    return;
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks); // the raw bytes, before any JSON parsing
    const refuse = (reason) => {
      console.log(`refused: ${reason}`);
      res.writeHead(401).end(reason);
    };
    const secret = process.env.SVC_CLIENT_SECRET, key = process.env.SVC_WEBHOOK_SECRET;
    let event;
    try {
      if (!secret && !key) throw new Error('no secret configured');
      if (secret) verifySvcSignature(secret, body, req.headers['x-svc-signature-256']);
      if (key) verifyStandardWebhook(key, req.headers, body);
      event = JSON.parse(body);
      if (!event.id) throw new Error('the body is not an event');
    } catch (err) {
      refuse(err.message);
      return;
    }
    if (seen.has(event.id)) {
      console.log(`duplicate ${event.id}`);
      res.writeHead(200).end(); // answered 2xx, so it is not sent again
      return;
    }
    seen.add(event.id);
    console.log(`accepted ${event.id} ${event.type}`); // handle the event here
    res.writeHead(200).end();
  });
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
