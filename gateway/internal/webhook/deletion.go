package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/svcplatform/svc/gateway/internal/claim"
	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/gateway/internal/identity"
)

// Data deletion callbacks (CONTRACT §16). When a person removes an app or
// leaves, identity writes a row of core.data_deletion_requests in the
// transaction of the change; any gateway claims due rows with a lease (as
// deliveries), POSTs Meta's signed request to the app's
// data_deletion_callback_url through the same address guard and clients as
// webhooks, and records the app's answer or retries on the webhooks'
// schedule. A restart loses nothing: an unfinished lease ends and the row
// is claimed again.

// deletionBatch bounds the requests one claim leases.
const deletionBatch = 16

// CheckDeletionCallbackURL applies the callback address rules of webhooks
// (https; http to loopback for development apps while the operator allows
// loopback; never metadata or reserved addresses) to an app's
// data_deletion_callback_url. It resolves the host. The error's message
// names the field and may be shown to the caller; it is nil when raw is
// fine.
func (s *Service) CheckDeletionCallbackURL(ctx context.Context, raw string, dev bool) error {
	u, err := parseCallback(raw, dev)
	if err == nil {
		err = s.checkCallbackHost(ctx, u, dev)
	}
	if err != nil {
		return errors.New(strings.Replace(err.Error(), "callback_url", "data_deletion_callback_url", 1))
	}
	return nil
}

// SignedRequest is Meta's signed request for userID at issuedAt, signed
// with secret: base64url (no padding) of HMAC-SHA256 of the encoded
// payload, a dot, and the encoded payload.
func SignedRequest(secret string, userID string, issuedAt time.Time) string {
	payload, _ := json.Marshal(struct {
		Algorithm string `json:"algorithm"`
		IssuedAt  int64  `json:"issued_at"`
		UserID    string `json:"user_id"`
	}{"HMAC-SHA256", issuedAt.Unix(), userID})
	enc := base64.RawURLEncoding.EncodeToString(payload)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(enc))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil)) + "." + enc
}

// WakeDeletions tells the running sender that requests were written here,
// so that they go out without waiting for the next poll.
func (s *Service) WakeDeletions() {
	select {
	case s.deletionWake <- struct{}{}:
	default:
	}
}

// deletionLoop sends due data deletion callbacks until ctx ends: polled
// every second, and at once when woken.
func (s *Service) deletionLoop(ctx context.Context, q *coredb.Queries) {
	poll := max(s.opts.PollInterval*10, time.Second)
	if s.opts.PollInterval < DefaultPollInterval {
		poll = s.opts.PollInterval // tests
	}
	claim.Loop(ctx, poll, s.deletionWake, deletionBatch, func(ctx context.Context) int { return s.sendDeletions(ctx, q) })
}

// sendDeletions claims one batch of due requests and attempts each; it
// answers how many it claimed.
func (s *Service) sendDeletions(ctx context.Context, q *coredb.Queries) int {
	lease := claim.Token()
	rows, err := q.ClaimDataDeletionRequests(ctx, coredb.ClaimDataDeletionRequestsParams{
		LeaseToken: &lease, LeaseSeconds: s.opts.Lease.Seconds(), MaxRows: deletionBatch})
	if err != nil {
		if ctx.Err() == nil {
			s.log.ErrorContext(ctx, "claim data deletion requests", "error", err)
		}
		return 0
	}
	for _, r := range rows {
		code, link, err := s.attemptDeletion(ctx, r)
		sctx, cancel := statementContext(context.WithoutCancel(ctx))
		if err == nil {
			_, err = q.ConfirmDataDeletionRequest(sctx, coredb.ConfirmDataDeletionRequestParams{
				ID: r.ID, LeaseToken: &lease, Url: link, ConfirmationCode: code})
		} else {
			var next pgtype.Timestamptz
			if d, retry := s.retryDelay(int(r.Attempts)); retry {
				next = pgtype.Timestamptz{Time: time.Now().Add(d), Valid: true}
			}
			s.log.WarnContext(ctx, "data deletion callback failed", "app_id", r.AppID, "attempt", r.Attempts+1,
				"retry", next.Valid, "error", err)
			_, err = q.FailDataDeletionAttempt(sctx, coredb.FailDataDeletionAttemptParams{
				ID: r.ID, LeaseToken: &lease, NextAttemptAt: next, LastError: err.Error()})
		}
		cancel()
		if err != nil {
			s.log.ErrorContext(ctx, "record a data deletion callback", "app_id", r.AppID, "error", err)
		}
	}
	return len(rows)
}

// maxDeletionAnswer bounds the app's answer read.
const maxDeletionAnswer = 64 << 10

// attemptDeletion calls the app once and answers its confirmation code and
// status URL. The address is checked again on the address dialled.
func (s *Service) attemptDeletion(ctx context.Context, r coredb.ClaimDataDeletionRequestsRow) (code, link string, err error) {
	if r.CallbackUrl == "" {
		return "", "", errors.New("the app has no data_deletion_callback_url")
	}
	dev := r.Mode != string(identity.ModeLive)
	u, err := parseCallback(r.CallbackUrl, dev)
	if err != nil {
		return "", "", err
	}
	secrets, err := identity.SealedSecrets{Current: r.ClientSecretSealed}.Open(s.box, r.AppID, time.Now())
	if err != nil || secrets.Current == "" {
		return "", "", fmt.Errorf("the app's client secret cannot be opened: %v", err)
	}
	form := url.Values{"signed_request": {SignedRequest(secrets.Current, identity.FormatID(r.UserID), time.Now())}}
	actx, cancel := context.WithTimeout(ctx, s.opts.AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, u.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return "", "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", s.userAgent)
	res, err := s.clientFor(u, dev).Do(req)
	if err != nil {
		return "", "", errors.New(describeSendError(err, s.opts.AttemptTimeout))
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxDeletionAnswer))
	if err != nil {
		return "", "", fmt.Errorf("reading the answer: %w", err)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return "", "", errors.New("the app answered HTTP " + strconv.Itoa(res.StatusCode))
	}
	var answer struct {
		URL              string `json:"url"`
		ConfirmationCode string `json:"confirmation_code"`
	}
	if err := json.Unmarshal(body, &answer); err != nil || answer.ConfirmationCode == "" {
		return "", "", errors.New(`the answer is not JSON with a confirmation_code ({"url","confirmation_code"})`)
	}
	return truncate(answer.ConfirmationCode, 256), truncate(answer.URL, 2048), nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
