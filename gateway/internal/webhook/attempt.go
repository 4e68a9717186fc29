package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/internal/netguard"
)

// excerptLimit bounds the response excerpt kept per attempt.
const excerptLimit = 1024

// drainLimit is how much of a response is read past the excerpt so the
// connection can be reused; longer answers close it.
const drainLimit = 64 << 10

// job is one claimed delivery.
type job struct {
	d     coredb.ClaimDeliveriesRow
	token int64
	// leaseEnds is a lower bound of the lease's end, by this gateway's
	// clock: the claim was sent before it was stamped in the database.
	leaseEnds time.Time
}

// outcome is what happened to one claimed delivery.
type outcome int

const (
	// The receiver answered 2xx in time.
	succeeded outcome = iota
	// The attempt failed: retry on schedule, or fail the delivery.
	failed
	// Not sent, and never will be: no subscription, or it is disabled.
	notSent
	// Cut short by Run stopping: logged, not counted, due again at once.
	interrupted
	// Not attempted (Run stopped first, or the lease was too short): due
	// again at once, nothing logged.
	released
	// Not sent because the endpoint is disabled (or answered 410 Gone now):
	// kept as held until the app replays it.
	held
)

// result is one finished job, for the recorder.
type result struct {
	job     *job
	outcome outcome
	// attempt is nil for released jobs.
	attempt *attemptLog
	// endpointFault says the failure is the endpoint's (it counts toward
	// disabling it), not ours.
	endpointFault bool
	// gone: the receiver answered 410 Gone; its endpoint is disabled.
	gone bool
	// retryAfter: the receiver answered 429 or 503 with Retry-After; the
	// next attempt to the endpoint waits this long (bounded).
	retryAfter time.Duration
	// viaListener: the attempt went to a listener (gateway listen), not to
	// the endpoint; it says nothing of the endpoint's health.
	viaListener bool
}

// viaListener is attemptLog.via for an attempt sent to a listener.
const viaListener = "listener"

// attemptLog is one entry of a delivery's attempt log.
type attemptLog struct {
	at         time.Time
	statusCode int
	latency    time.Duration
	err        string
	excerpt    string
	// via is "listener" for an attempt sent to gateway listen; "" for the
	// endpoint.
	via string
}

// attempt runs one job: checks the subscription, signs the body and POSTs
// it. ctx is cancelled only when Run gives up draining.
func (s *Service) attempt(ctx context.Context, j *job) result {
	d := j.d
	now := time.Now()
	if now.Add(s.opts.AttemptTimeout + leaseMargin(s.opts)).After(j.leaseEnds) {
		// Waited too long in the queue: another gateway may claim the row
		// before this attempt could end.
		return result{job: j, outcome: released}
	}
	fail := func(endpoint bool, format string, args ...any) result {
		return result{job: j, outcome: failed, endpointFault: endpoint,
			attempt: &attemptLog{at: now, err: fmt.Sprintf(format, args...)}}
	}
	// While the app listens here, its deliveries go to the listener.
	if l := s.listeners.pick(d.AppID, d.EventType); l != nil {
		return s.attemptListener(ctx, j, l, now)
	}
	switch {
	case d.CallbackUrl == nil && s.appListening(ctx, d.AppID):
		// Made for a listener that is connected elsewhere or went away a
		// moment ago: it comes again, on the retry schedule or as soon as
		// a listener connects here.
		return fail(false, "not sent: the app's listener (gateway listen) is not connected to this gateway; it is sent again")
	case d.CallbackUrl == nil:
		return result{job: j, outcome: notSent, attempt: &attemptLog{at: now,
			err: "not sent: the app has no webhook subscription"}}
	case !*d.Active && !d.Test:
		return result{job: j, outcome: held, attempt: &attemptLog{at: now,
			err: "held: the endpoint is disabled; save the subscription to enable it again, then replay the held deliveries"}}
	}
	dev := d.AppMode != "live"
	u, err := parseCallback(*d.CallbackUrl, dev)
	if err != nil {
		return fail(true, "not sent: %v", err)
	}
	body, header, err := s.signed(ctx, d, now)
	if err != nil {
		return fail(false, "not sent: %v", err)
	}

	actx, cancel := context.WithTimeout(ctx, s.opts.AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return fail(true, "not sent: callback_url cannot be requested")
	}
	req.Header = header
	res, err := s.clientFor(u, dev).Do(req)
	log := &attemptLog{at: now}
	if err != nil {
		log.latency = time.Since(now)
		if ctx.Err() != nil {
			log.err = "interrupted: the gateway stopped before the receiver answered; it will be sent again"
			return result{job: j, outcome: interrupted, attempt: log}
		}
		log.err = describeSendError(err, s.opts.AttemptTimeout)
		return result{job: j, outcome: failed, endpointFault: true, attempt: log}
	}
	log.latency = time.Since(now)
	log.statusCode = res.StatusCode
	excerpt, _ := io.ReadAll(io.LimitReader(res.Body, excerptLimit))
	drain(res.Body)
	res.Body.Close()
	log.excerpt = cleanText(excerpt)
	if res.StatusCode >= 200 && res.StatusCode <= 299 {
		return result{job: j, outcome: succeeded, attempt: log}
	}
	switch res.StatusCode {
	case http.StatusGone:
		log.err = "the receiver answered HTTP 410 Gone: the endpoint is disabled and its events are held until it is saved again"
		return result{job: j, outcome: held, gone: true, attempt: log}
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		if wait, ok := parseRetryAfter(res.Header.Get("Retry-After"), now); ok {
			log.err = fmt.Sprintf("the receiver answered HTTP %d with Retry-After: nothing is sent to it for %s", res.StatusCode, wait)
			return result{job: j, outcome: failed, endpointFault: true, attempt: log, retryAfter: wait}
		}
	}
	log.err = fmt.Sprintf("the receiver answered HTTP %d, not 2xx", res.StatusCode)
	return result{job: j, outcome: failed, endpointFault: true, attempt: log}
}

// signed renders a delivery's body and headers, signed, exactly as they go
// on the wire, to the endpoint or to a listener. The error says why it
// cannot be sent.
func (s *Service) signed(ctx context.Context, d coredb.ClaimDeliveriesRow, now time.Time) ([]byte, http.Header, error) {
	if d.Sealed == nil {
		return nil, nil, errors.New("the app has no signing secret yet; rotate its client secret")
	}
	// The current secret first, then the previous one while a rotation's
	// overlap lasts: both sign (CONTRACT §14).
	open, err := identity.SealedSecrets{Current: d.Sealed, Previous: d.PreviousSealed,
		PreviousExpiresAt: d.PreviousSecretExpiresAt.Time}.Open(s.box, d.AppID, now)
	if err != nil {
		s.log.ErrorContext(ctx, "cannot open an app's signing secret", "app_id", d.AppID, "error", err)
		return nil, nil, errors.New("the signing secret cannot be read by this gateway")
	}
	body, err := encodeBody(d.EventID, d.EventType, d.EventCreatedAt.Time, d.AppID, d.PageID, d.Data)
	if err != nil {
		return nil, nil, err
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", s.userAgent)
	secrets := []string{open.Current}
	if open.Previous != "" {
		secrets = append(secrets, open.Previous)
	}
	ts := strconv.FormatInt(now.Unix(), 10)
	h.Set(HeaderSignature, Signature(secrets[0], body))
	h.Set(HeaderEvent, d.EventType)
	h.Set(HeaderDelivery, d.ID)
	h.Set(HeaderTimestamp, ts)
	// Set directly: the Standard Webhooks spelling is lower case.
	h[HeaderWebhookID] = []string{d.EventID}
	h[HeaderWebhookTimestamp] = []string{ts}
	h[HeaderWebhookSignature] = []string{StandardSignature(secrets, d.EventID, now.Unix(), body)}
	return body, h, nil
}

// Bounds of a Retry-After a receiver may set: at least a second, at most
// an hour, so that a receiver can neither make us spin nor park its events
// for days.
const (
	minRetryAfter = time.Second
	maxRetryAfter = time.Hour
)

// parseRetryAfter reads a Retry-After header (RFC 9110 §10.2.3: delay
// seconds or an HTTP date) as a wait from now, clamped to [minRetryAfter,
// maxRetryAfter]; false when absent or not of either form.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	var wait time.Duration
	if n, err := strconv.ParseUint(v, 10, 63); err == nil {
		if n > uint64(maxRetryAfter/time.Second) {
			n = uint64(maxRetryAfter / time.Second)
		}
		wait = time.Duration(n) * time.Second
	} else if at, err := http.ParseTime(v); err == nil {
		wait = at.Sub(now)
	} else {
		return 0, false
	}
	return min(max(wait, minRetryAfter), maxRetryAfter), true
}

// leaseMargin is kept between an attempt's end and its lease's end, for
// the time the result takes to be recorded.
func leaseMargin(o Options) time.Duration {
	return min(5*time.Second, (o.Lease-o.AttemptTimeout)/2)
}

// retryDelay is the wait after a delivery's failed-th failure (counting
// from 0), jittered; false when no retry is left.
func (s *Service) retryDelay(failedBefore int) (time.Duration, bool) {
	if failedBefore >= len(s.opts.RetrySchedule) {
		return 0, false
	}
	d := s.opts.RetrySchedule[failedBefore]
	if j := s.opts.Jitter; j > 0 {
		d = time.Duration(float64(d) * (1 + j*(2*rand.Float64()-1)))
	}
	return d, true
}

// describeSendError says why a request got no answer, without repeating
// the URL (its query may hold a secret of the receiver's).
func describeSendError(err error, timeout time.Duration) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var blocked *netguard.BlockedAddressError
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var recordErr tls.RecordHeaderError
	switch {
	case errors.As(err, &blocked):
		return "connection refused by the platform: " + blocked.Error()
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return fmt.Sprintf("timeout: no answer within %s", timeout)
	case errors.As(err, &dnsErr):
		return "the host name does not resolve: " + dnsErr.Err
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection was closed before an answer"
	case errors.As(err, &certErr):
		return "TLS certificate not trusted: " + certErr.Err.Error()
	case errors.As(err, &recordErr):
		return "TLS handshake failed: the receiver does not speak TLS"
	}
	return cleanText([]byte(err.Error()))
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// drain reads what is left of a response, up to drainLimit, so that the
// connection can serve the next request.
func drain(r io.Reader) { _, _ = io.Copy(io.Discard, io.LimitReader(r, drainLimit)) }

// cleanText makes b storable as PostgreSQL text: valid UTF-8 without NUL,
// at most excerptLimit bytes, not cut inside a character.
func cleanText(b []byte) string {
	if len(b) > excerptLimit {
		b = b[:excerptLimit]
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	for len(s) > excerptLimit {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}
