package webhook

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/svcplatform/svc/internal/netguard"
)

// verifyCallback runs the subscription handshake: GET the callback with
// hub.mode=subscribe, hub.challenge=<random> and hub.verify_token=<token>,
// and expect a 2xx whose body is the challenge. The error explains the
// failure to the caller; it never repeats the token.
func (s *Service) verifyCallback(ctx context.Context, u *url.URL, dev bool, token string) error {
	challenge := rand.Text()
	q := u.Query()
	q.Set("hub.mode", "subscribe")
	q.Set("hub.challenge", challenge)
	q.Set("hub.verify_token", token)
	target := *u
	target.RawQuery = q.Encode()

	ctx, cancel := context.WithTimeout(ctx, s.opts.VerifyTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target.String(), nil)
	if err != nil {
		return refuse("callback_url cannot be requested")
	}
	req.Header.Set("User-Agent", s.userAgent)
	res, err := s.clientFor(u, dev).Do(req)
	if err != nil {
		// Only "unreachable": whether a port refused, reset or timed out
		// would let any signed-in developer map the networks the gateway
		// sees. A refusal by the platform's own rules says which rule.
		var blocked *netguard.BlockedAddressError
		if errors.As(err, &blocked) {
			return refuse("callback_url did not answer the verification request: %s", describeSendError(err, s.opts.VerifyTimeout))
		}
		return refuse("callback_url did not answer the verification request: unreachable")
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, excerptLimit+1))
	drain(res.Body)
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return refuse("callback_url answered the verification request with HTTP %d, not 2xx", res.StatusCode)
	}
	if strings.TrimSpace(string(body)) != challenge {
		return refuse("callback_url did not echo hub.challenge in its answer to the verification request")
	}
	return nil
}
