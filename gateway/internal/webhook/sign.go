package webhook

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/svcplatform/svc/sdk"
)

// Headers of every delivery.
const (
	HeaderSignature = "X-Svc-Signature-256"
	HeaderEvent     = "X-Svc-Event"
	HeaderDelivery  = "X-Svc-Delivery"
	HeaderTimestamp = "X-Svc-Timestamp"
	// Standard Webhooks (www.standardwebhooks.com) headers, sent beside
	// ours so that its libraries verify our deliveries (CONTRACT §14).
	HeaderWebhookID        = "webhook-id"
	HeaderWebhookTimestamp = "webhook-timestamp"
	HeaderWebhookSignature = "webhook-signature"
)

// StandardSignature is the webhook-signature value of a delivery: for each
// secret, "v1," and the base64 HMAC-SHA256 of "<id>.<timestamp>.<body>"
// keyed by the secret's bytes (the client secret as it was handed out),
// space-separated. During a client secret rotation secrets holds the
// current and the previous one, so a receiver holding either verifies.
func StandardSignature(secrets []string, id string, timestamp int64, body []byte) string {
	signed := make([]string, 0, len(secrets))
	for _, secret := range secrets {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(id))
		mac.Write([]byte{'.'})
		mac.Write([]byte(strconv.FormatInt(timestamp, 10)))
		mac.Write([]byte{'.'})
		mac.Write(body)
		signed = append(signed, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	return strings.Join(signed, " ")
}

// StandardKeyPrefix starts a Standard Webhooks key as its libraries take
// it.
const StandardKeyPrefix = "whsec_"

// StandardKey is the app's client secret in the form Standard Webhooks
// libraries take (new Webhook(key)): "whsec_" and the standard base64 of the
// secret's bytes. The libraries strip the prefix and decode the rest to the
// HMAC key, so they get back exactly the bytes StandardSignature signs with:
// the wire signature does not change, and the key is the client secret
// written differently (whoever sees it knows the client secret).
func StandardKey(clientSecret string) string {
	return StandardKeyPrefix + base64.StdEncoding.EncodeToString([]byte(clientSecret))
}

// Signature is the X-Svc-Signature-256 value of body for an app whose
// client secret is secret: "sha256=" and the lowercase hex HMAC-SHA256 of
// the raw body.
func Signature(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// VerifySignature tells, in constant time, whether header is body's
// signature under secret. Receivers written in Go can use it.
func VerifySignature(secret string, body []byte, header string) bool {
	return hmac.Equal([]byte(header), []byte(Signature(secret, body)))
}

// Body is the JSON document POSTed to a callback.
type Body struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	Created    int64           `json:"created"`
	APIVersion string          `json:"api_version"`
	AppID      string          `json:"app_id"`
	PageID     *string         `json:"page_id"`
	Data       json.RawMessage `json:"data"`
}

// encodeBody renders a delivery's body. It depends only on the stored
// delivery, so every attempt sends the same bytes.
func encodeBody(eventID, eventType string, created time.Time, appID int64, pageID *string, data []byte) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// Data arrives as PostgreSQL wrote it; keep text as written, no \u003c.
	enc.SetEscapeHTML(false)
	err := enc.Encode(Body{
		ID: eventID, Type: eventType, Created: created.Unix(), APIVersion: APIVersion,
		AppID: sdk.FormatID(appID), PageID: pageID, Data: data,
	})
	if err != nil {
		return nil, fmt.Errorf("encode body of event %s: %w", eventID, err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
