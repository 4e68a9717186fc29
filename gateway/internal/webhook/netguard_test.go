package webhook

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestCallbackURLForm(t *testing.T) {
	for _, tc := range []struct {
		url  string
		dev  bool
		want string // "" for accepted
	}{
		{"https://example.com/hook?x=1", false, ""},
		{"HTTPS://example.com/hook", false, ""},
		{"http://127.0.0.1:8080/hook", true, ""},
		{"http://127.0.0.1:8080/hook", false, "https"},
		{"ftp://example.com/", true, "https"},
		{"example.com/hook", true, "absolute"},
		{"https:///hook", true, "absolute"},
		{"https://user:pw@example.com/", true, "credentials"},
		{"https://example.com/#frag", true, "fragment"},
		{"https://example.com:0/", true, "port"},
		{"https://example.com:99999/", true, "port"},
		{"mailto:ops@example.com", true, "absolute"},
	} {
		_, err := parseCallback(tc.url, tc.dev)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("parseCallback(%q, dev %v) = %v, want accepted", tc.url, tc.dev, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("parseCallback(%q, dev %v) = %v, want an error about %s", tc.url, tc.dev, err, tc.want)
		}
	}
}

func TestResponseExcerptIsStorableText(t *testing.T) {
	long := strings.Repeat("é", 1000) // 2000 bytes
	for _, in := range []string{long, "a\x00b", "\xff\xfe bad utf-8", strings.Repeat("x", 1023) + "é"} {
		got := cleanText([]byte(in))
		if len(got) > excerptLimit || !utf8.ValidString(got) || strings.ContainsRune(got, 0) {
			t.Errorf("cleanText(%.20q…) = %d bytes, valid %v", in, len(got), utf8.ValidString(got))
		}
	}
}

func TestRetryScheduleHasJitterWithinBounds(t *testing.T) {
	s := &Service{opts: Options{RetrySchedule: DefaultRetrySchedule, Jitter: DefaultJitter}}
	for i, base := range DefaultRetrySchedule {
		for range 200 {
			d, ok := s.retryDelay(i)
			if !ok || d < time.Duration(0.8*float64(base)) || d > time.Duration(1.2*float64(base)) {
				t.Fatalf("retry %d: %s, want %s ± 20 %%", i, d, base)
			}
		}
	}
	if _, ok := s.retryDelay(len(DefaultRetrySchedule)); ok {
		t.Fatal("a retry after the schedule's last")
	}
}

func TestSignatureIsLowercaseHexHMACSHA256(t *testing.T) {
	// RFC 4231 test case 2.
	got := Signature("Jefe", []byte("what do ya want for nothing?"))
	want := "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
	if got != want {
		t.Fatalf("Signature = %s, want %s", got, want)
	}
	if !VerifySignature("Jefe", []byte("what do ya want for nothing?"), want) ||
		VerifySignature("jefe", []byte("what do ya want for nothing?"), want) {
		t.Fatal("VerifySignature disagrees with Signature")
	}
}
