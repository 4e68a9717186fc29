package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/svcplatform/svc/internal/netguard"
)

// newClient returns an HTTP client whose connections stay within r. It
// never uses a proxy (the proxy would connect on our behalf, unchecked) and
// never follows redirects (a 3xx is an answer, and not a 2xx).
func (s *Service) newClient(r netguard.Reach) *http.Client {
	d := netguard.NewDialer(r, s.lookupIP, 5*time.Second)
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
func (s *Service) reachFor(u *url.URL, dev bool) netguard.Reach { return s.reaches[policyFor(u, dev)] }

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
	ips, err := netguard.Resolve(ctx, s.lookupIP, u.Hostname())
	if err != nil {
		return refuse("callback_url's host %s does not resolve", u.Hostname())
	}
	r := s.reachFor(u, dev)
	for _, ip := range ips {
		if err := r.Check(ip); err != nil {
			var blocked *netguard.BlockedAddressError
			if errors.As(err, &blocked) && u.Scheme == "http" && blocked.Class != netguard.Loopback {
				return refuse("callback_url must use https: plain http is allowed only to loopback while the app is in development mode")
			}
			if errors.As(err, &blocked) && blocked.Class == netguard.Loopback {
				if dev {
					// The app is in development: the operator refused loopback.
					return refuse("callback_url resolves to %s, a loopback address, which this gateway lets callbacks reach only with the development seed or --webhook-allow-loopback", ip)
				}
				return refuse("callback_url resolves to %s, a loopback address, allowed only while the app is in development mode", ip)
			}
			return refuse("callback_url resolves to %s, %s, which callbacks may not reach", ip, netguard.Classify(ip))
		}
	}
	return nil
}
