package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// addrClass sorts an IP address by what reaching it would expose.
type addrClass int

const (
	classPublic addrClass = iota
	classLoopback
	// Private, unique-local, shared (CGNAT) and link-local addresses.
	classPrivate
	// 0.0.0.0, :: and 0.0.0.0/8: connecting there reaches the local host.
	classUnspecified
	// Cloud instance metadata services: never a webhook receiver.
	classMetadata
	// Multicast, broadcast, reserved and documentation ranges, and tunnels
	// whose real destination is hidden.
	classReserved
)

func (c addrClass) String() string {
	switch c {
	case classLoopback:
		return "a loopback address"
	case classPrivate:
		return "a private or link-local address"
	case classUnspecified:
		return "an unspecified address"
	case classMetadata:
		return "a cloud metadata address"
	case classReserved:
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

// classify sorts ip. IPv4 addresses embedded in IPv6 (mapped, NAT64, 6to4)
// are judged by the IPv4 address they lead to.
func classify(ip netip.Addr) addrClass {
	ip = ip.WithZone("")
	if ip.Is4In6() {
		ip = ip.Unmap()
	}
	for _, m := range metadataAddrs {
		if ip == m {
			return classMetadata
		}
	}
	if ip.Is6() && (nat64.Contains(ip) || nat64Local.Contains(ip)) {
		b := ip.As16()
		return classify(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	}
	if ip.Is6() && sixToFour.Contains(ip) {
		b := ip.As16()
		return classify(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
	}
	switch {
	case ip.IsUnspecified() || (ip.Is4() && thisNetwork.Contains(ip)):
		return classUnspecified
	case ip.IsLoopback():
		return classLoopback
	case ip.IsPrivate() || ip.IsLinkLocalUnicast() || (ip.Is4() && sharedPrefix.Contains(ip)):
		return classPrivate
	case ip.IsMulticast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast():
		return classReserved
	case ip.Is4() && (reservedV4.Contains(ip) || benchmarkingV4.Contains(ip) || ietfV4.Contains(ip)):
		return classReserved
	case ip.Is6() && (teredo.Contains(ip) || (ip.As16()[0] == 0 && !ip.IsLoopback())):
		// Teredo hides the real destination; ::/8 holds only deprecated
		// IPv4-compatible and special addresses.
		return classReserved
	}
	for _, p := range documentation {
		if p.Contains(ip) {
			return classReserved
		}
	}
	return classPublic
}

// reach is what one client may connect to.
type reach struct {
	public, loopback, private bool
}

// BlockedAddressError reports a callback address the rules refuse.
type BlockedAddressError struct {
	Addr  netip.Addr
	class addrClass
}

func (e *BlockedAddressError) Error() string {
	return fmt.Sprintf("%s is %s, which callbacks may not reach", e.Addr, e.class)
}

// check refuses ip unless r allows its class.
func (r reach) check(ip netip.Addr) error {
	c := classify(ip)
	ok := false
	switch c {
	case classPublic:
		ok = r.public
	case classLoopback:
		ok = r.loopback
	case classPrivate:
		ok = r.private
	case classUnspecified:
		// It reaches the local host, so it needs what loopback needs, and it
		// is an address the operator must have allowed.
		ok = r.loopback && r.private
	}
	if !ok {
		return &BlockedAddressError{Addr: ip, class: c}
	}
	return nil
}

// guardedDialer resolves names itself, dials only the addresses its reach
// allows, and checks again in the socket's Control hook, on the address
// actually connected to, before any packet leaves.
type guardedDialer struct {
	reach  reach
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	dialer net.Dialer
}

func newGuardedDialer(r reach, lookup func(ctx context.Context, host string) ([]netip.Addr, error)) *guardedDialer {
	d := &guardedDialer{reach: r, lookup: lookup}
	d.dialer = net.Dialer{
		Timeout:   5 * time.Second,
		KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("webhook: dial %q: %w", address, err)
			}
			return r.check(ap.Addr())
		},
	}
	return d
}

// DialContext dials address, trying each allowed address of the host in
// turn.
func (d *guardedDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	ips, err := resolve(ctx, d.lookup, host)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, ip := range ips {
		if err := d.reach.check(ip); err != nil {
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

// resolve returns host's addresses: itself when it is an IP literal.
func resolve(ctx context.Context, lookup func(ctx context.Context, host string) ([]netip.Addr, error), host string) ([]netip.Addr, error) {
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

// newClient returns an HTTP client whose connections stay within r. It
// never uses a proxy (the proxy would connect on our behalf, unchecked) and
// never follows redirects (a 3xx is an answer, and not a 2xx).
func (s *Service) newClient(r reach) *http.Client {
	d := newGuardedDialer(r, s.lookupIP)
	t := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		TLSClientConfig:       s.opts.TLSConfig.Clone(),
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          4 * s.opts.Workers,
		MaxIdleConnsPerHost:   s.opts.Workers,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   s.opts.AttemptTimeout,
		ResponseHeaderTimeout: s.opts.AttemptTimeout,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{
		Transport:     t,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// policy is one set of connection rules for callbacks.
type policy int

const (
	// Plain HTTP, development apps only: loopback alone.
	plainDev policy = iota
	// HTTPS of development apps: also loopback.
	tlsDev
	// HTTPS of live apps: never loopback.
	tlsLive
	policies
)

// policyFor is the policy of a callback URL for an app in development
// (dev) or live mode.
func policyFor(u *url.URL, dev bool) policy {
	switch {
	case u.Scheme == "http":
		return plainDev
	case dev:
		return tlsDev
	}
	return tlsLive
}

// clientFor is the client that may connect to a callback.
func (s *Service) clientFor(u *url.URL, dev bool) *http.Client { return s.clients[policyFor(u, dev)] }

// reachFor is what clientFor's client may connect to.
func (s *Service) reachFor(u *url.URL, dev bool) reach { return s.reaches[policyFor(u, dev)] }

// callbackError is why a callback URL is refused; its message is shown to
// the caller.
type callbackError struct{ msg string }

func (e *callbackError) Error() string { return e.msg }

func refuse(format string, args ...any) error {
	return &callbackError{msg: fmt.Sprintf(format, args...)}
}

// parseCallback checks the form of a callback URL for an app in dev
// (development) or live mode. It does not resolve the host.
func parseCallback(raw string, dev bool) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return nil, refuse("callback_url must be an absolute http(s) URL")
	}
	u.Scheme = strings.ToLower(u.Scheme)
	switch {
	case u.Scheme != "https" && u.Scheme != "http":
		return nil, refuse("callback_url must use https")
	case u.User != nil:
		return nil, refuse("callback_url must not carry credentials")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return nil, refuse("callback_url must not have a fragment")
	case u.Hostname() == "":
		return nil, refuse("callback_url has no host")
	case u.Scheme == "http" && !dev:
		return nil, refuse("callback_url must use https: plain http is allowed only to loopback while the app is in development mode")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.ParseUint(p, 10, 16); err != nil || n == 0 {
			return nil, refuse("callback_url has an invalid port")
		}
	}
	return u, nil
}

// checkCallbackHost resolves u's host and refuses it when any of its
// addresses is out of reach, naming the address.
func (s *Service) checkCallbackHost(ctx context.Context, u *url.URL, dev bool) error {
	ips, err := resolve(ctx, s.lookupIP, u.Hostname())
	if err != nil {
		return refuse("callback_url's host %s does not resolve", u.Hostname())
	}
	r := s.reachFor(u, dev)
	for _, ip := range ips {
		if err := r.check(ip); err != nil {
			var blocked *BlockedAddressError
			if errors.As(err, &blocked) && u.Scheme == "http" && blocked.class != classLoopback {
				return refuse("callback_url must use https: plain http is allowed only to loopback while the app is in development mode")
			}
			if errors.As(err, &blocked) && blocked.class == classLoopback {
				return refuse("callback_url resolves to %s, a loopback address, allowed only while the app is in development mode", ip)
			}
			return refuse("callback_url resolves to %s, %s, which callbacks may not reach", ip, classify(ip))
		}
	}
	return nil
}
