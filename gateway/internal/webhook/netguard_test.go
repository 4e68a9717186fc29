package webhook

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestAddressClasses(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want addrClass
	}{
		{"93.184.216.34", classPublic},
		{"2606:2800:220:1:248:1893:25c8:1946", classPublic},
		{"127.0.0.1", classLoopback},
		{"127.8.9.10", classLoopback},
		{"::1", classLoopback},
		{"::ffff:127.0.0.1", classLoopback},
		{"10.0.0.1", classPrivate},
		{"172.16.5.4", classPrivate},
		{"192.168.1.1", classPrivate},
		{"100.64.0.1", classPrivate},
		{"169.254.1.1", classPrivate},
		{"fe80::1", classPrivate},
		{"fe80::1%eth0", classPrivate},
		{"fd12:3456::1", classPrivate},
		{"::ffff:10.0.0.1", classPrivate},
		{"64:ff9b::a00:1", classPrivate},
		{"64:ff9b::5db8:d822", classPublic},
		{"2002:c0a8:0101::1", classPrivate},
		{"0.0.0.0", classUnspecified},
		{"0.1.2.3", classUnspecified},
		{"::", classUnspecified},
		{"169.254.169.254", classMetadata},
		{"::ffff:169.254.169.254", classMetadata},
		{"168.63.129.16", classMetadata},
		{"fd00:ec2::254", classMetadata},
		{"100.100.100.200", classMetadata},
		{"224.0.0.1", classReserved},
		{"255.255.255.255", classReserved},
		{"240.0.0.1", classReserved},
		{"198.18.0.1", classReserved},
		{"192.0.2.1", classReserved},
		{"ff02::1", classReserved},
		{"2001:db8::1", classReserved},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", classReserved},
		{"::10.0.0.1", classReserved},
	} {
		if got := classify(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("classify(%s) = %s, want %s", tc.addr, got, tc.want)
		}
	}
}

func TestReachRules(t *testing.T) {
	live := reach{public: true}
	dev := reach{public: true, loopback: true}
	plainDev := reach{loopback: true}
	operator := reach{public: true, private: true}
	operatorDev := reach{public: true, loopback: true, private: true}
	for _, tc := range []struct {
		name string
		r    reach
		addr string
		ok   bool
	}{
		{"live apps reach public addresses", live, "93.184.216.34", true},
		{"live apps never reach loopback", live, "127.0.0.1", false},
		{"live apps never reach loopback even when private networks are allowed", operator, "::1", false},
		{"development apps reach loopback", dev, "::1", true},
		{"plain http reaches loopback", plainDev, "127.0.0.1", true},
		{"plain http never reaches public addresses", plainDev, "93.184.216.34", false},
		{"private addresses are refused by default", dev, "10.0.0.1", false},
		{"the operator may allow private addresses", operator, "10.0.0.1", true},
		{"the operator may allow link-local addresses", operator, "169.254.3.3", true},
		{"metadata stays refused when the operator allows private networks", operatorDev, "169.254.169.254", false},
		{"Azure's wire server is refused though its address is public", operatorDev, "168.63.129.16", false},
		{"the unspecified address needs loopback and private allowed", operator, "0.0.0.0", false},
		{"the unspecified address with both allowed", operatorDev, "0.0.0.0", true},
		{"multicast is always refused", operatorDev, "224.0.0.1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.r.check(netip.MustParseAddr(tc.addr))
			if (err == nil) != tc.ok {
				t.Fatalf("check(%s) = %v, want ok %v", tc.addr, err, tc.ok)
			}
			var blocked *BlockedAddressError
			if err != nil && !errors.As(err, &blocked) {
				t.Fatalf("error %T is not a *BlockedAddressError", err)
			}
		})
	}
}

// The Control hook refuses the address actually dialled, whatever resolved
// it: no packet leaves for a refused address.
func TestControlHookRefusesTheDialledAddress(t *testing.T) {
	d := newGuardedDialer(reach{public: true}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, addr := range []string{"10.0.0.1:443", "169.254.169.254:80", "[::1]:443", "127.0.0.1:9"} {
		start := time.Now()
		_, err := d.dialer.DialContext(ctx, "tcp", addr)
		var blocked *BlockedAddressError
		if !errors.As(err, &blocked) {
			t.Errorf("dial %s: %v, want a *BlockedAddressError", addr, err)
		}
		if time.Since(start) > 500*time.Millisecond {
			t.Errorf("dial %s took %s: it tried to connect", addr, time.Since(start))
		}
	}
}

func TestGuardedDialerTriesOnlyAllowedAddresses(t *testing.T) {
	lookup := func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("169.254.169.254")}, nil
	}
	d := newGuardedDialer(reach{public: true, loopback: true}, lookup)
	_, err := d.DialContext(context.Background(), "tcp", "rebound.example:443")
	if err == nil || !strings.Contains(err.Error(), "10.0.0.1") || !strings.Contains(err.Error(), "metadata") {
		t.Fatalf("dial a name resolving to private and metadata addresses: %v", err)
	}
}

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
