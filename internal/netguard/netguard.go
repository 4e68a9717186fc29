package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// Class sorts an IP address by what reaching it would expose.
type Class int

// The classes, from the most to the least reachable.
const (
	// Public addresses: the internet.
	Public Class = iota
	// Loopback addresses: this machine.
	Loopback
	// Private, unique-local, shared (CGNAT) and link-local addresses.
	Private
	// 0.0.0.0, :: and 0.0.0.0/8: connecting there reaches the local host.
	Unspecified
	// Cloud instance metadata services: never reachable.
	Metadata
	// Multicast, broadcast, reserved and documentation ranges, and tunnels
	// whose real destination is hidden.
	Reserved
)

// String names the class in a sentence: "a loopback address".
func (c Class) String() string {
	switch c {
	case Loopback:
		return "a loopback address"
	case Private:
		return "a private or link-local address"
	case Unspecified:
		return "an unspecified address"
	case Metadata:
		return "a cloud metadata address"
	case Reserved:
		return "a reserved address"
	}
	return "a public address"
}

var (
	metadataAddrs = []netip.Addr{
		netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, OpenStack, …
		netip.MustParseAddr("169.254.170.2"),   // AWS ECS task metadata
		netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
		netip.MustParseAddr("168.63.129.16"),   // Azure wire server (public range, platform-internal)
		netip.MustParseAddr("fd00:ec2::254"),   // AWS over IPv6
	}
	sharedPrefix   = netip.MustParsePrefix("100.64.0.0/10")  // RFC 6598
	thisNetwork    = netip.MustParsePrefix("0.0.0.0/8")      // RFC 1122
	reservedV4     = netip.MustParsePrefix("240.0.0.0/4")    // and broadcast
	benchmarkingV4 = netip.MustParsePrefix("198.18.0.0/15")  // RFC 2544
	ietfV4         = netip.MustParsePrefix("192.0.0.0/24")   // RFC 6890
	nat64          = netip.MustParsePrefix("64:ff9b::/96")   // RFC 6052
	nat64Local     = netip.MustParsePrefix("64:ff9b:1::/48") // RFC 8215
	sixToFour      = netip.MustParsePrefix("2002::/16")      // RFC 3056
	teredo         = netip.MustParsePrefix("2001::/32")      // RFC 4380
	documentation  = []netip.Prefix{
		netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("198.51.100.0/24"),
		netip.MustParsePrefix("203.0.113.0/24"), netip.MustParsePrefix("2001:db8::/32"),
	}
)

// Classify sorts ip. IPv4 addresses embedded in IPv6 (mapped, NAT64, 6to4)
// are judged by the IPv4 address they lead to.
func Classify(ip netip.Addr) Class {
	ip = ip.WithZone("")
	if ip.Is4In6() {
		ip = ip.Unmap()
	}
	for _, m := range metadataAddrs {
		if ip == m {
			return Metadata
		}
	}
	if ip.Is6() && (nat64.Contains(ip) || nat64Local.Contains(ip)) {
		b := ip.As16()
		return Classify(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	}
	if ip.Is6() && sixToFour.Contains(ip) {
		b := ip.As16()
		return Classify(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
	}
	switch {
	case ip.IsUnspecified() || (ip.Is4() && thisNetwork.Contains(ip)):
		return Unspecified
	case ip.IsLoopback():
		return Loopback
	case ip.IsPrivate() || ip.IsLinkLocalUnicast() || (ip.Is4() && sharedPrefix.Contains(ip)):
		return Private
	case ip.IsMulticast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast():
		return Reserved
	case ip.Is4() && (reservedV4.Contains(ip) || benchmarkingV4.Contains(ip) || ietfV4.Contains(ip)):
		return Reserved
	case ip.Is6() && (teredo.Contains(ip) || (ip.As16()[0] == 0 && !ip.IsLoopback())):
		// Teredo hides the real destination; ::/8 holds only deprecated
		// IPv4-compatible and special addresses.
		return Reserved
	}
	for _, p := range documentation {
		if p.Contains(ip) {
			return Reserved
		}
	}
	return Public
}

// Reach is what one client may connect to. Public addresses need Public;
// loopback needs Loopback, private and link-local Private, and the
// unspecified address (which reaches the local host) both. Metadata,
// multicast and reserved addresses are never reachable.
type Reach struct {
	Public, Loopback, Private bool
}

// BlockedAddressError reports an address a Reach refuses.
type BlockedAddressError struct {
	Addr  netip.Addr
	Class Class
}

func (e *BlockedAddressError) Error() string {
	return fmt.Sprintf("%s is %s, which the platform does not connect to", e.Addr, e.Class)
}

// Check refuses ip, with a *BlockedAddressError, unless r allows its class.
func (r Reach) Check(ip netip.Addr) error {
	c := Classify(ip)
	ok := false
	switch c {
	case Public:
		ok = r.Public
	case Loopback:
		ok = r.Loopback
	case Private:
		ok = r.Private
	case Unspecified:
		// It reaches the local host, so it needs what loopback needs, and it
		// is an address the operator must have allowed.
		ok = r.Loopback && r.Private
	}
	if !ok {
		return &BlockedAddressError{Addr: ip, Class: c}
	}
	return nil
}

// Lookup resolves a host name to its addresses.
type Lookup func(ctx context.Context, host string) ([]netip.Addr, error)

// SystemLookup is the system resolver.
func SystemLookup(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// Dialer resolves names itself, dials only the addresses its Reach allows,
// and checks again in the socket's Control hook, on the address actually
// connected to, before any packet leaves.
type Dialer struct {
	reach  Reach
	lookup Lookup
	dialer net.Dialer
}

// NewDialer returns a Dialer within r, resolving with lookup (nil:
// SystemLookup) and giving up on a connection after timeout.
func NewDialer(r Reach, lookup Lookup, timeout time.Duration) *Dialer {
	if lookup == nil {
		lookup = SystemLookup
	}
	d := &Dialer{reach: r, lookup: lookup}
	d.dialer = net.Dialer{
		Timeout:   timeout,
		KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("netguard: dial %q: %w", address, err)
			}
			return r.Check(ap.Addr())
		},
	}
	return d
}

// DialContext dials address, trying each allowed address of the host in
// turn.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	ips, err := Resolve(ctx, d.lookup, host)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, ip := range ips {
		if err := d.reach.Check(ip); err != nil {
			errs = append(errs, err)
			continue
		}
		conn, err := d.dialer.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// Resolve returns host's addresses: itself when it is an IP literal.
func Resolve(ctx context.Context, lookup Lookup, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	ips, err := lookup(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", host)
	}
	return ips, nil
}
