package main

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	socialv1 "github.com/svcplatform/svc/gen/svc/social/v1"
	"github.com/svcplatform/svc/internal/netguard"
	"github.com/svcplatform/svc/plugins/social/internal/socialdb"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/event"
)

// Bounds of the media check.
const (
	// MaxVideoBytes is the largest video a reel may point at: 1 GiB.
	MaxVideoBytes = 1 << 30
	// maxAttempts is how often an unreachable video is tried.
	maxAttempts = 3
	// checkTimeout bounds one check, redirects included.
	checkTimeout = 15 * time.Second
)

// createReel stores a processing reel and answers before its video is
// checked. The gateway has checked pages:manage and the Page admin role.
func (s *service) createReel(ctx context.Context, call *sdk.Call, req *socialv1.CreateReelRequest) (*socialv1.CreateReelResponse, error) {
	if err := validateVideoURL(req.GetVideoUrl(), s.opts.Development); err != nil {
		return nil, err
	}
	if strings.ContainsRune(req.GetCaption(), 0) {
		return nil, sdk.Invalid("caption", "Invalid parameter: caption must not contain the NUL character.")
	}
	row, err := socialdb.New(s.pool).InsertReel(ctx, socialdb.InsertReelParams{
		PageID: req.GetPageId(), AuthorID: call.Principal().UserID, VideoUrl: req.GetVideoUrl(), Caption: req.GetCaption(),
	})
	if err != nil {
		return nil, err
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return &socialv1.CreateReelResponse{Id: strconv.FormatInt(row.ID, 10), Status: row.Status}, nil
}

// getReel reads a reel the caller may see (a user with a role on its Page
// or an app linked to it) and counts the read as a view unless the reader
// published it.
func (s *service) getReel(ctx context.Context, call *sdk.Call, req *socialv1.GetReelRequest) (*socialv1.Reel, error) {
	row, err := s.readableReel(ctx, call, req.GetReelId())
	if err != nil {
		return nil, err
	}
	p := call.Principal()
	if p.UserID != row.AuthorID {
		if err := socialdb.New(s.pool).CountReelView(ctx, socialdb.CountReelViewParams{PageID: row.PageID, ID: row.ID}); err != nil {
			return nil, err
		}
	}
	return &socialv1.Reel{
		Id: strconv.FormatInt(row.ID, 10), PageId: row.PageID, VideoUrl: row.VideoUrl, Caption: row.Caption,
		Status: row.Status, ErrorReason: row.ErrorReason, AuthorId: row.AuthorID,
		CreatedTime: row.CreatedAt.Time.UTC().Format(time.RFC3339),
	}, nil
}

// reelInsights answers a reel's counts to the users with a role on its
// Page; to anyone else the reel does not exist.
func (s *service) reelInsights(ctx context.Context, call *sdk.Call, req *socialv1.GetReelInsightsRequest) (*socialv1.InsightsResponse, error) {
	metrics, err := parseMetrics(req.GetMetric())
	if err != nil {
		return nil, err
	}
	row, err := s.visibleReel(ctx, call, req.GetReelId(), sdk.PageRoleEditor)
	if err != nil {
		return nil, err
	}
	e, err := socialdb.New(s.pool).ReelEngagement(ctx, socialdb.ReelEngagementParams{PageID: row.PageID, ReelID: row.ID})
	if err != nil {
		return nil, err
	}
	return insights(metrics, counts{Views: row.Views, Likes: e.Likes, Replies: e.Replies}), nil
}

// readableReel reads a reel the caller may see: a user with a role on its
// Page, or anyone through an app linked to it. To anyone else it does not
// exist.
func (s *service) readableReel(ctx context.Context, call *sdk.Call, reelID string) (socialdb.SocialReel, error) {
	return s.visibleReel(ctx, call, reelID, sdk.PageRoleLinked)
}

// likeReel records the token's user's like of a reel the user may read;
// liking again changes nothing.
func (s *service) likeReel(ctx context.Context, call *sdk.Call, req *socialv1.LikeReelRequest) (*socialv1.SuccessResponse, error) {
	row, err := s.readableReel(ctx, call, req.GetReelId())
	if err != nil {
		return nil, err
	}
	err = socialdb.New(s.pool).LikeReel(ctx, socialdb.LikeReelParams{PageID: row.PageID, ReelID: row.ID, UserID: call.Principal().UserID})
	if err != nil {
		return nil, err
	}
	return &socialv1.SuccessResponse{Success: true}, nil
}

// createReelReply stores the token's user's reply to a reel the user may
// read. The gateway has checked the length of text.
func (s *service) createReelReply(ctx context.Context, call *sdk.Call, req *socialv1.CreateReelReplyRequest) (*socialv1.CreateThreadResponse, error) {
	if strings.ContainsRune(req.GetText(), 0) {
		return nil, sdk.Invalid("text", "Invalid parameter: text must not contain the NUL character.")
	}
	row, err := s.readableReel(ctx, call, req.GetReelId())
	if err != nil {
		return nil, err
	}
	reply, err := socialdb.New(s.pool).InsertReelReply(ctx, socialdb.InsertReelReplyParams{
		PageID: row.PageID, ReelID: row.ID, AuthorID: call.Principal().UserID, Text: req.GetText(),
	})
	if err != nil {
		return nil, err
	}
	return &socialv1.CreateThreadResponse{Id: strconv.FormatInt(reply.ID, 10)}, nil
}

// listReelReplies lists a reel's replies, oldest first.
func (s *service) listReelReplies(ctx context.Context, call *sdk.Call, req *socialv1.ListReelRepliesRequest) (*socialv1.ListReelRepliesResponse, error) {
	w, err := sdk.ParseWindow(req.GetLimit(), req.GetAfter(), req.GetBefore())
	if err != nil {
		return nil, err
	}
	row, err := s.readableReel(ctx, call, req.GetReelId())
	if err != nil {
		return nil, err
	}
	q := socialdb.New(s.pool)
	var rows []socialdb.SocialReelReply
	if w.Before != 0 {
		rows, err = q.ReelRepliesBefore(ctx, socialdb.ReelRepliesBeforeParams{PageID: row.PageID, ReelID: row.ID, Before: w.Before, Lim: w.Fetch()})
	} else {
		rows, err = q.ReelRepliesAfter(ctx, socialdb.ReelRepliesAfterParams{PageID: row.PageID, ReelID: row.ID, After: w.After, Lim: w.Fetch()})
	}
	if err != nil {
		return nil, err
	}
	rows, paging := sdk.Page(w, rows, func(r socialdb.SocialReelReply) int64 { return r.ID })
	res := &socialv1.ListReelRepliesResponse{Data: make([]*socialv1.ReelReply, len(rows))}
	paging.Set(res)
	for i, r := range rows {
		res.Data[i] = &socialv1.ReelReply{Id: strconv.FormatInt(r.ID, 10), ReelId: strconv.FormatInt(r.ReelID, 10),
			Text: r.Text, AuthorId: r.AuthorID, CreatedTime: r.CreatedAt.Time.UTC().Format(time.RFC3339)}
	}
	return res, nil
}

// visibleReel reads a reel for a caller who has the least role need on its
// Page, as the gateway decides; to anyone else the reel does not exist.
func (s *service) visibleReel(ctx context.Context, call *sdk.Call, reelID string, need sdk.PageRole) (socialdb.SocialReel, error) {
	id, ok := sdk.ParseID(reelID)
	if !ok {
		return socialdb.SocialReel{}, reelNotFound(reelID)
	}
	row, err := socialdb.New(s.pool).GetReel(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return row, reelNotFound(reelID)
	}
	if err != nil {
		return row, err
	}
	p := call.Principal()
	_, err = call.Host().PageAccess(ctx, sdk.PageQuery{PageID: row.PageID, UserID: p.UserID, AppID: p.AppID, Need: need})
	if errors.Is(err, sdk.ErrPageRefused) {
		return row, reelNotFound(reelID)
	}
	return row, err
}

func reelNotFound(id string) error { return sdk.NotFound("Reel " + id) }

// validateVideoURL accepts an absolute https URL without credentials (they
// would be stored in plain text), or in development an http URL on a
// loopback host. Anything else is refused naming video_url.
func validateVideoURL(raw string, development bool) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return sdk.Invalid("video_url", "Invalid parameter: video_url must be an absolute https URL.")
	}
	if u.User != nil {
		return sdk.Invalid("video_url", "Invalid parameter: video_url must not carry a user name or password.")
	}
	switch {
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && development && isLoopbackHost(u.Hostname()):
		return nil
	case u.Scheme == "http" && isLoopbackHost(u.Hostname()):
		return sdk.Invalid("video_url", "Invalid parameter: video_url must use https (http on loopback is for development only).")
	}
	return sdk.Invalid("video_url", "Invalid parameter: video_url must use https, not %q.", u.Scheme)
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// errBadRedirect stops a redirect the media check does not follow.
var errBadRedirect = errors.New("redirected")

// newMediaClient is the client of the media check. It connects only to
// public addresses, loopback too in development, through the platform's one
// outbound guard (internal/netguard, the webhooks' too): a reel must not
// make the platform probe its own networks or a cloud's metadata service.
// It uses no proxy, and follows at most 5 redirects, each of which must
// pass validateVideoURL.
func newMediaClient(development bool) *http.Client {
	dialer := netguard.NewDialer(netguard.Reach{Public: true, Loopback: development}, nil, 10*time.Second)
	transport := &http.Transport{
		Proxy:       nil,
		DialContext: dialer.DialContext, TLSHandshakeTimeout: 10 * time.Second,
		ResponseHeaderTimeout: 10 * time.Second, MaxIdleConns: 4, IdleConnTimeout: 30 * time.Second,
	}
	return &http.Client{Transport: transport, Timeout: checkTimeout, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return fmt.Errorf("%w: more than 5", errBadRedirect)
		}
		if err := validateVideoURL(req.URL.String(), development); err != nil {
			return fmt.Errorf("%w: to a URL that is not https", errBadRedirect)
		}
		return nil
	}}
}

// checkMedia asks the video's server for its headers and says what they
// mean for the reel, with the reason when it is not Accepted.
func checkMedia(ctx context.Context, client *http.Client, videoURL string) (ReelTrigger, string) {
	res, err := mediaHeaders(ctx, client, http.MethodHead, videoURL)
	if err == nil && (res.StatusCode == http.StatusMethodNotAllowed || res.StatusCode == http.StatusNotImplemented) {
		res, err = mediaHeaders(ctx, client, http.MethodGet, videoURL)
	}
	var blocked *netguard.BlockedAddressError
	if errors.As(err, &blocked) {
		return Rejected, "the video URL's host is not a public address (" + blocked.Class.String() + ")"
	}
	if errors.Is(err, errBadRedirect) {
		var ue *url.Error
		if errors.As(err, &ue) {
			return Rejected, "the video URL " + ue.Err.Error()
		}
		return Rejected, "the video URL redirected where it may not"
	}
	if err != nil {
		return Unreachable, "the video URL could not be reached"
	}
	switch {
	case res.StatusCode >= 500 || res.StatusCode == http.StatusTooManyRequests:
		return Unreachable, fmt.Sprintf("the video URL answered HTTP %d", res.StatusCode)
	case res.StatusCode < 200 || res.StatusCode > 299:
		return Rejected, fmt.Sprintf("the video URL answered HTTP %d", res.StatusCode)
	}
	ct := res.Header.Get("Content-Type")
	media, _, err := mime.ParseMediaType(ct)
	if err != nil || !strings.HasPrefix(media, "video/") {
		return Rejected, fmt.Sprintf("the Content-Type %q is not video/*", ct)
	}
	size := res.ContentLength
	if size < 0 {
		size, err = strconv.ParseInt(res.Header.Get("Content-Length"), 10, 64)
		if err != nil || size < 0 {
			return Rejected, "the video URL gives no Content-Length, so the size cannot be checked"
		}
	}
	switch {
	case size == 0:
		return Rejected, "the video is empty (Content-Length 0)"
	case size > MaxVideoBytes:
		return Rejected, fmt.Sprintf("the video is %d bytes, more than 1 GiB", size)
	}
	return Accepted, ""
}

// mediaHeaders sends one request and closes the body unread: only the
// headers matter, and a video is not downloaded.
func mediaHeaders(ctx context.Context, client *http.Client, method, videoURL string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, videoURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "svc-social-media-check/"+version)
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	_ = res.Body.Close()
	return res, nil
}

// runChecker checks processing reels until ctx ends: at once after a reel
// is created in this process, and every Poll for reels of other processes
// and retries that came due.
func (s *service) runChecker(ctx context.Context) {
	tick := time.NewTicker(s.opts.Poll)
	defer tick.Stop()
	for {
		for {
			did, err := s.checkOne(ctx)
			if err != nil {
				s.log.Warn("reel check failed", "error", err)
				break
			}
			if !did {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-s.wake:
		}
	}
}

// checkOne claims the next due reel, checks its video and stores the
// outcome (emitting social.reel.ready) in the claiming transaction. It
// reports whether there was a reel to check.
func (s *service) checkOne(ctx context.Context) (bool, error) {
	did := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := socialdb.New(tx)
		reel, err := q.ClaimReelCheck(ctx)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		did = true
		cctx, cancel := context.WithTimeout(ctx, checkTimeout)
		trigger, reason := checkMedia(cctx, s.opts.HTTPClient, reel.VideoUrl)
		cancel()
		if trigger == Unreachable && reel.Attempts+1 >= maxAttempts {
			trigger = GaveUp
		}
		to, emit, err := reelTransition(ReelStatus(reel.Status), trigger)
		if err != nil {
			return err
		}
		if to != Failed {
			reason = ""
		}
		// A retry waits 5 s, then 10 s.
		retry := float64(int(5) << reel.Attempts)
		if err := q.SetReelChecked(ctx, socialdb.SetReelCheckedParams{PageID: reel.PageID, ID: reel.ID, Status: string(to), ErrorReason: reason, RetrySeconds: retry}); err != nil {
			return err
		}
		if !emit {
			return nil
		}
		_, err = event.Emit(ctx, tx, event.Event{
			Type: EventReelReady, PageID: reel.PageID,
			Data: map[string]string{"id": strconv.FormatInt(reel.ID, 10), "page_id": reel.PageID},
		})
		return err
	})
	return did, err
}
