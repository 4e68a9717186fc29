package netguard

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestAddressClasses(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want Class
	}{
		{"93.184.216.34", Public},
		{"2606:2800:220:1:248:1893:25c8:1946", Public},
		{"127.0.0.1", Loopback},
		{"127.8.9.10", Loopback},
		{"::1", Loopback},
		{"::ffff:127.0.0.1", Loopback},
		{"10.0.0.1", Private},
		{"172.16.5.4", Private},
		{"192.168.1.1", Private},
		{"100.64.0.1", Private},
		{"169.254.1.1", Private},
		{"fe80::1", Private},
		{"fe80::1%eth0", Private},
		{"fd12:3456::1", Private},
		{"::ffff:10.0.0.1", Private},
		{"64:ff9b::a00:1", Private},
		{"64:ff9b::5db8:d822", Public},
		{"2002:c0a8:0101::1", Private},
		{"0.0.0.0", Unspecified},
		{"0.1.2.3", Unspecified},
		{"::", Unspecified},
		{"169.254.169.254", Metadata},
		{"::ffff:169.254.169.254", Metadata},
		{"168.63.129.16", Metadata},
		{"fd00:ec2::254", Metadata},
		{"100.100.100.200", Metadata},
		{"224.0.0.1", Reserved},
		{"255.255.255.255", Reserved},
		{"240.0.0.1", Reserved},
		{"198.18.0.1", Reserved},
		{"192.0.2.1", Reserved},
		{"ff02::1", Reserved},
		{"2001:db8::1", Reserved},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", Reserved},
		{"::10.0.0.1", Reserved},
	} {
		if got := Classify(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("Classify(%s) = %s, want %s", tc.addr, got, tc.want)
		}
	}
}

func TestReachRules(t *testing.T) {
	live := Reach{Public: true}
	dev := Reach{Public: true, Loopback: true}
	plainDev := Reach{Loopback: true}
	operator := Reach{Public: true, Private: true}
	operatorDev := Reach{Public: true, Loopback: true, Private: true}
	for _, tc := range []struct {
		name string
		r    Reach
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
			err := tc.r.Check(netip.MustParseAddr(tc.addr))
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
	d := NewDialer(Reach{Public: true}, nil, 5*time.Second)
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
	d := NewDialer(Reach{Public: true, Loopback: true}, lookup, 5*time.Second)
	_, err := d.DialContext(context.Background(), "tcp", "rebound.example:443")
	if err == nil || !strings.Contains(err.Error(), "10.0.0.1") || !strings.Contains(err.Error(), "metadata") {
		t.Fatalf("dial a name resolving to private and metadata addresses: %v", err)
	}
}
