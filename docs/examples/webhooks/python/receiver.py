"""A webhook receiver that verifies both signatures of a delivery, using
only Python's standard library (docs/WEBHOOKS.md).

  SVC_CLIENT_SECRET=…         checks X-Svc-Signature-256 (the app's client secret)
  SVC_WEBHOOK_SECRET=whsec_…  checks webhook-signature (Standard Webhooks)
  SVC_VERIFY_TOKEN=…          answers the subscription handshake
  PORT=3000                   listens on 127.0.0.1:PORT (0: any free port)

Set one secret or both; every one set must verify. It prints one line per
request: "listening on …", then "accepted <id> <type>", "duplicate <id>"
or "refused: <reason>".
"""
import base64
import hashlib
import hmac
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

# How far webhook-timestamp may be from now, in seconds.
TOLERANCE = 5 * 60


def verify_svc_signature(client_secret, body, header):
    """X-Svc-Signature-256: "sha256=" and the lowercase hex HMAC-SHA256 of
    the raw body, keyed by the client secret."""
    want = "sha256=" + hmac.new(client_secret.encode(), body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest((header or "").encode(), want.encode()):
        raise ValueError("X-Svc-Signature-256 does not match the body")


def verify_standard_webhook(key, headers, body, now=None):
    """webhook-signature: one or more space-separated "v1,<base64
    HMAC-SHA256 of id.timestamp.body>", keyed by the base64-decoded part of
    the whsec_ key; webhook-timestamp within TOLERANCE of now."""
    secret = base64.b64decode(key.removeprefix("whsec_"))
    msg_id, ts = headers.get("webhook-id"), headers.get("webhook-timestamp") or ""
    if not msg_id or not ts.isdigit():
        raise ValueError("webhook-id or webhook-timestamp missing")
    if abs((time.time() if now is None else now) - int(ts)) > TOLERANCE:
        raise ValueError("webhook-timestamp is too far from now")
    mac = hmac.new(secret, f"{msg_id}.{ts}.".encode() + body, hashlib.sha256)
    want = base64.b64encode(mac.digest())
    for sig in (headers.get("webhook-signature") or "").split(" "):
        if sig.startswith("v1,") and hmac.compare_digest(sig[3:].encode(), want):
            return
    raise ValueError("webhook-signature does not match")


# The event ids already handled: deliveries come at least once, so the same
# id may come again. Keep them in your database.
seen = set()
lock = threading.Lock()


class Receiver(BaseHTTPRequestHandler):
    def answer(self, status, text=""):
        self.send_response(status)
        self.send_header("Content-Length", str(len(text.encode())))
        self.end_headers()
        self.wfile.write(text.encode())

    def do_GET(self):  # the subscription handshake
        q = {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}
        if q.get("hub.mode") != "subscribe" or q.get("hub.verify_token") != os.environ.get("SVC_VERIFY_TOKEN"):
            return self.answer(403, "wrong verify token")
        self.answer(200, q.get("hub.challenge", ""))

    def do_POST(self):
        # The raw bytes, before any JSON parsing.
        body = self.rfile.read(min(int(self.headers.get("Content-Length") or 0), 1 << 20))
        secret, key = os.environ.get("SVC_CLIENT_SECRET"), os.environ.get("SVC_WEBHOOK_SECRET")
        try:
            if not secret and not key:
                raise ValueError("no secret configured")
            if secret:
                verify_svc_signature(secret, body, self.headers.get("X-Svc-Signature-256"))
            if key:
                verify_standard_webhook(key, self.headers, body)
            event = json.loads(body)
            if not isinstance(event, dict) or not event.get("id"):
                raise ValueError("the body is not an event")
        except ValueError as err:  # json.JSONDecodeError and binascii.Error are ValueErrors
            print(f"refused: {err}", flush=True)
            return self.answer(401, str(err))
        with lock:
            dup = event["id"] in seen
            seen.add(event["id"])
        if dup:
            print(f"duplicate {event['id']}", flush=True)
            return self.answer(200)  # answered 2xx, so it is not sent again
        print(f"accepted {event['id']} {event.get('type')}", flush=True)  # handle the event here
        self.answer(200)

    def log_message(self, *args):  # one line per request is ours
        pass


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("PORT", "3000"))), Receiver)
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()
