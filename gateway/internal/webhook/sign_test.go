package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"testing"

	"github.com/svcplatform/svc/gateway/internal/webhook"
)

// libraryVerify is what the Standard Webhooks libraries do with the key
// they are given (new Webhook(key), then verify): strip "whsec_", decode
// the base64 rest to the HMAC key, sign "<id>.<timestamp>.<body>", and
// accept when any "v1," entry of webhook-signature matches.
func libraryVerify(t *testing.T, key, id string, ts int64, body []byte, header string) bool {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(key, "whsec_"))
	if err != nil {
		t.Fatalf("the key %q is not whsec_ and base64: %v", key, err)
	}
	mac := hmac.New(sha256.New, raw)
	mac.Write([]byte(id + "." + strconv.FormatInt(ts, 10) + "."))
	mac.Write(body)
	want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, sig := range strings.Split(header, " ") {
		if v, ok := strings.CutPrefix(sig, "v1,"); ok && hmac.Equal([]byte(v), []byte(want)) {
			return true
		}
	}
	return false
}

func TestStandardKeyIsWhsecAndTheBase64OfTheClientSecretSoLibrariesVerifyTheWireSignature(t *testing.T) {
	const secret = "cs_3q2-7Zx_secret/with+odd=chars"
	key := webhook.StandardKey(secret)
	if want := "whsec_" + base64.StdEncoding.EncodeToString([]byte(secret)); key != want {
		t.Fatalf("StandardKey = %q, want %q", key, want)
	}
	body := []byte(`{"id":"evt_1","type":"book.post.created"}`)
	header := webhook.StandardSignature([]string{secret}, "evt_1", 1700000000, body)
	if !libraryVerify(t, key, "evt_1", 1700000000, body, header) {
		t.Fatalf("a library given %q refuses the signature %q", key, header)
	}
	// During a rotation both secrets sign; a receiver holding either
	// key verifies.
	both := webhook.StandardSignature([]string{"new-secret", secret}, "evt_1", 1700000000, body)
	if !libraryVerify(t, key, "evt_1", 1700000000, body, both) || !libraryVerify(t, webhook.StandardKey("new-secret"), "evt_1", 1700000000, body, both) {
		t.Fatalf("a rotation's signatures %q are not verified by each key", both)
	}
	if libraryVerify(t, key, "evt_1", 1700000000, append(body, ' '), header) {
		t.Fatal("a changed body verifies")
	}
}
