// A webhook receiver that verifies both signatures of a delivery, using
// only Go's standard library (docs/WEBHOOKS.md).
//
//	SVC_CLIENT_SECRET=…     checks X-Svc-Signature-256 (the app's client secret)
//	SVC_WEBHOOK_SECRET=whsec_…  checks webhook-signature (Standard Webhooks)
//	SVC_VERIFY_TOKEN=…      answers the subscription handshake
//	PORT=3000               listens on 127.0.0.1:PORT (0: any free port)
//
// Set one secret or both; every one set must verify. It prints one line per
// request: "listening on …", then "accepted <id> <type>", "duplicate <id>"
// or "refused: <reason>".
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Tolerance bounds how far webhook-timestamp may be from now.
const Tolerance = 5 * time.Minute

// VerifySvcSignature checks X-Svc-Signature-256: "sha256=" and the
// lowercase hex HMAC-SHA256 of the raw body, keyed by the client secret.
func VerifySvcSignature(clientSecret string, body []byte, header string) error {
	mac := hmac.New(sha256.New, []byte(clientSecret))
	mac.Write(body)
	want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	if !hmac.Equal([]byte(header), []byte(want)) {
		return errors.New("X-Svc-Signature-256 does not match the body")
	}
	return nil
}

// VerifyStandardWebhook checks webhook-signature: one or more
// space-separated "v1,<base64 HMAC-SHA256 of id.timestamp.body>", keyed by
// the base64-decoded part of the whsec_ key, and that webhook-timestamp is
// within Tolerance of now.
func VerifyStandardWebhook(key string, h http.Header, body []byte, now time.Time) error {
	secret, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(key, "whsec_"))
	if err != nil {
		return errors.New("SVC_WEBHOOK_SECRET is not whsec_ and base64")
	}
	id, ts := h.Get("webhook-id"), h.Get("webhook-timestamp")
	sent, err := strconv.ParseInt(ts, 10, 64)
	if id == "" || err != nil {
		return errors.New("webhook-id or webhook-timestamp missing")
	}
	if d := now.Sub(time.Unix(sent, 0)); d > Tolerance || d < -Tolerance {
		return errors.New("webhook-timestamp is too far from now")
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		if v, ok := strings.CutPrefix(sig, "v1,"); ok && hmac.Equal([]byte(v), []byte(want)) {
			return nil
		}
	}
	return errors.New("webhook-signature does not match")
}

// seen remembers the event ids already handled: deliveries come at least
// once, so the same id may come again. Keep them in your database.
var (
	mu   sync.Mutex
	seen = map[string]bool{}
)

func handle(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet { // the subscription handshake
		q := r.URL.Query()
		if q.Get("hub.mode") != "subscribe" || q.Get("hub.verify_token") != os.Getenv("SVC_VERIFY_TOKEN") {
			http.Error(w, "wrong verify token", http.StatusForbidden)
			return
		}
		io.WriteString(w, q.Get("hub.challenge"))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20)) // the raw bytes, before any JSON parsing
	if err != nil {
		http.Error(w, "cannot read the body", http.StatusBadRequest)
		return
	}
	refuse := func(reason string) {
		fmt.Println("refused:", reason)
		http.Error(w, reason, http.StatusUnauthorized)
	}
	secret, key := os.Getenv("SVC_CLIENT_SECRET"), os.Getenv("SVC_WEBHOOK_SECRET")
	if secret == "" && key == "" {
		refuse("no secret configured")
		return
	}
	if secret != "" {
		if err := VerifySvcSignature(secret, body, r.Header.Get("X-Svc-Signature-256")); err != nil {
			refuse(err.Error())
			return
		}
	}
	if key != "" {
		if err := VerifyStandardWebhook(key, r.Header, body, time.Now()); err != nil {
			refuse(err.Error())
			return
		}
	}
	var event struct{ ID, Type string }
	if err := json.Unmarshal(body, &event); err != nil || event.ID == "" {
		refuse("the body is not an event")
		return
	}
	mu.Lock()
	dup := seen[event.ID]
	seen[event.ID] = true
	mu.Unlock()
	if dup {
		fmt.Println("duplicate", event.ID)
		w.WriteHeader(http.StatusOK) // answered 2xx, so it is not sent again
		return
	}
	fmt.Println("accepted", event.ID, event.Type) // handle the event here
	w.WriteHeader(http.StatusOK)
}

func main() {
	port := os.Getenv("PORT")
	if port == "" {
		port = "3000"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	log.Fatal(http.Serve(ln, http.HandlerFunc(handle)))
}
