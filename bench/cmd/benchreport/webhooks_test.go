package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// The delivery rate counts what the receiver counts: only requests that
// carry the platform's signature header, and, while tracking, the first
// arrival of each event id for the latency.
func TestTheHookReceiverCountsOnlySignedDeliveriesAndTracksEachEventOnce(t *testing.T) {
	rcv, err := startHookReceiver()
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.close()
	res, err := http.Get(rcv.url + "?hub.mode=subscribe&hub.challenge=c123&hub.verify_token=" + hookVerifyToken)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(body) != "c123" {
		t.Fatalf("verification answered %d %q; want 200 c123", res.StatusCode, body)
	}
	post := func(signed bool, id string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, rcv.url, strings.NewReader(`{"id":"`+id+`","type":"book.post.created"}`))
		if signed {
			req.Header.Set("X-Svc-Signature-256", "sha256=00")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("delivery answered %d; want 200", res.StatusCode)
		}
	}
	post(true, "evt_untracked")
	post(false, "evt_unsigned")
	rcv.tracking.Store(true)
	post(true, "evt_1")
	post(true, "evt_1") // a retry of the same event
	post(true, "evt_2")
	if got := rcv.signed.Load(); got != 4 {
		t.Errorf("signed deliveries counted = %d; want 4 (the unsigned one is not)", got)
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if _, ok := rcv.arrived["evt_untracked"]; ok || len(rcv.arrived) != 2 {
		t.Errorf("tracked arrivals = %v; want evt_1 and evt_2 only", rcv.arrived)
	}
}
