package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

func TestLoadgenReportsJSON(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]bool{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen[r.URL.Query().Get("n")+" "+string(b)+" "+r.Header.Get("X-Test")] = true
		mu.Unlock()
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer ts.Close()
	var out bytes.Buffer
	err := run(context.Background(), []string{"-c", "3", "-n", "50", "-d", "30s", "-m", "post", "-H", "X-Test: yes",
		"-body", "body {{counter}}", "-json", ts.URL + "/w?n={{counter}}"}, &out, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Requests uint64                `json:"requests"`
		Status   map[string]uint64     `json:"status"`
		Latency  struct{ P99 float64 } `json:"latency_us"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if res.Requests != 50 || res.Status["200"] != 50 || res.Latency.P99 <= 0 {
		t.Fatalf("%s", out.String())
	}
	if len(seen) != 50 || !seen["7 body 7 yes"] {
		t.Errorf("requests seen: %v", seen)
	}
}

func TestLoadgenRejectsBadInput(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-H", "no colon", "http://127.0.0.1:1/"},
		{"https://127.0.0.1:1/"},
		{"http://example.com/"},
	} {
		if err := run(context.Background(), args, io.Discard, io.Discard); err == nil {
			t.Errorf("%q: no error", strings.Join(args, " "))
		}
	}
}
