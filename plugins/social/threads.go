package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	socialv1 "github.com/svcplatform/svc/gen/svc/social/v1"
	"github.com/svcplatform/svc/plugins/social/internal/socialdb"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/event"
)

// Events the plugin emits (CONTRACT §6).
const (
	// EventThreadCreated {id, author_id, reply_to} goes to the app whose
	// token published the thread: threads belong to a user, not a Page.
	EventThreadCreated = "social.thread.created"
	// EventReelReady {id, page_id} goes to the apps linked to the Page.
	EventReelReady = "social.reel.ready"
)

// Options tune the plugin; the zero value of a field means its default.
type Options struct {
	// Development allows reels on http://127.0.0.1 (and other loopback
	// hosts), and lets the checker connect to them.
	Development bool
	// Poll is how often an idle checker looks for processing reels;
	// default 1 second.
	Poll time.Duration
	// HTTPClient checks videos; default one built by newMediaClient.
	HTTPClient *http.Client
}

type service struct {
	pool *pgxpool.Pool
	opts Options
	log  *slog.Logger
	// wake nudges this process's checker after a reel is created here.
	wake chan struct{}
}

func newService(pool *pgxpool.Pool, opts Options, log *slog.Logger) *service {
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = newMediaClient(opts.Development)
	}
	return &service{pool: pool, opts: opts, log: log, wake: make(chan struct{}, 1)}
}

func (s *service) register(p *sdk.Plugin) {
	file := socialv1.File_svc_social_v1_social_proto
	threads := file.Services().ByName("ThreadsService").Methods()
	sdk.Handle(p, threads.ByName("CreateThread"), s.createThread)
	sdk.OnUserLeft(p, s.userLeft)
	sdk.Handle(p, threads.ByName("GetThread"), s.getThread)
	sdk.Handle(p, threads.ByName("CreateReply"), s.createReply)
	sdk.Handle(p, threads.ByName("ListReplies"), s.listReplies)
	sdk.Handle(p, threads.ByName("LikeThread"), s.likeThread)
	sdk.Handle(p, threads.ByName("GetThreadInsights"), s.threadInsights)
	reels := file.Services().ByName("ReelsService").Methods()
	sdk.Handle(p, reels.ByName("CreateReel"), s.createReel)
	sdk.Handle(p, reels.ByName("GetReel"), s.getReel)
	sdk.Handle(p, reels.ByName("GetReelInsights"), s.reelInsights)
	sdk.Handle(p, reels.ByName("LikeReel"), s.likeReel)
	sdk.Handle(p, reels.ByName("CreateReelReply"), s.createReelReply)
	sdk.Handle(p, reels.ByName("ListReelReplies"), s.listReelReplies)
}

// createThread publishes a top-level thread of the token's user.
func (s *service) createThread(ctx context.Context, call *sdk.Call, req *socialv1.CreateThreadRequest) (*socialv1.CreateThreadResponse, error) {
	return s.publish(ctx, call, req.GetText(), nil)
}

// createReply publishes a thread replying to thread_id.
func (s *service) createReply(ctx context.Context, call *sdk.Call, req *socialv1.CreateReplyRequest) (*socialv1.CreateThreadResponse, error) {
	id, ok := sdk.ParseID(req.GetThreadId())
	if !ok {
		return nil, threadNotFound(req.GetThreadId())
	}
	return s.publish(ctx, call, req.GetText(), &id)
}

// publish inserts a thread and emits social.thread.created in the same
// transaction. The gateway has checked the length of text.
func (s *service) publish(ctx context.Context, call *sdk.Call, text string, replyTo *int64) (*socialv1.CreateThreadResponse, error) {
	if strings.ContainsRune(text, 0) {
		return nil, sdk.Invalid("text", "Invalid parameter: text must not contain the NUL character.")
	}
	p := call.Principal()
	var row socialdb.SocialThread
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := socialdb.New(tx)
		if replyTo != nil {
			// The reply's foreign key would refuse an unknown thread too,
			// but with a database error rather than the documented 404.
			exists, err := q.ThreadExists(ctx, *replyTo)
			if err != nil {
				return err
			}
			if !exists {
				return threadNotFound(strconv.FormatInt(*replyTo, 10))
			}
		}
		var err error
		row, err = q.InsertThread(ctx, socialdb.InsertThreadParams{AuthorID: p.UserID, AppID: p.AppID, Text: text, ReplyTo: replyTo})
		if err != nil {
			return err
		}
		_, err = event.Emit(ctx, tx, event.Event{
			Type: EventThreadCreated, AppID: p.AppID, UserID: row.AuthorID,
			Data: map[string]string{"id": strconv.FormatInt(row.ID, 10), "author_id": row.AuthorID, "reply_to": idString(row.ReplyTo)},
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &socialv1.CreateThreadResponse{Id: strconv.FormatInt(row.ID, 10)}, nil
}

// getThread reads a thread and counts the read as a view unless the reader
// is its author, in one statement.
func (s *service) getThread(ctx context.Context, call *sdk.Call, req *socialv1.GetThreadRequest) (*socialv1.Thread, error) {
	id, ok := sdk.ParseID(req.GetThreadId())
	if !ok {
		return nil, threadNotFound(req.GetThreadId())
	}
	row, err := socialdb.New(s.pool).ReadThread(ctx, socialdb.ReadThreadParams{ReaderID: call.Principal().UserID, ID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, threadNotFound(req.GetThreadId())
	}
	if err != nil {
		return nil, err
	}
	return threadProto(row), nil
}

// listReplies lists a thread's direct replies, oldest first.
func (s *service) listReplies(ctx context.Context, _ *sdk.Call, req *socialv1.ListRepliesRequest) (*socialv1.ListRepliesResponse, error) {
	id, ok := sdk.ParseID(req.GetThreadId())
	if !ok {
		return nil, threadNotFound(req.GetThreadId())
	}
	w, err := sdk.ParseWindow(req.GetLimit(), req.GetAfter(), req.GetBefore())
	if err != nil {
		return nil, err
	}
	q := socialdb.New(s.pool)
	exists, err := q.ThreadExists(ctx, id)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, threadNotFound(req.GetThreadId())
	}
	var rows []socialdb.SocialThread
	if w.Before != 0 {
		rows, err = q.RepliesBefore(ctx, socialdb.RepliesBeforeParams{ThreadID: id, Before: w.Before, Lim: w.Fetch()})
	} else {
		rows, err = q.RepliesAfter(ctx, socialdb.RepliesAfterParams{ThreadID: id, After: w.After, Lim: w.Fetch()})
	}
	if err != nil {
		return nil, err
	}
	rows, paging := sdk.Page(w, rows, func(t socialdb.SocialThread) int64 { return t.ID })
	res := &socialv1.ListRepliesResponse{Data: make([]*socialv1.Thread, len(rows))}
	paging.Set(res)
	for i, r := range rows {
		res.Data[i] = threadProto(r)
	}
	return res, nil
}

// likeThread records the token's user's like; liking again changes nothing.
func (s *service) likeThread(ctx context.Context, call *sdk.Call, req *socialv1.LikeThreadRequest) (*socialv1.SuccessResponse, error) {
	id, ok := sdk.ParseID(req.GetThreadId())
	if !ok {
		return nil, threadNotFound(req.GetThreadId())
	}
	err := socialdb.New(s.pool).LikeThread(ctx, socialdb.LikeThreadParams{ThreadID: id, UserID: call.Principal().UserID})
	if isForeignKeyViolation(err) {
		return nil, threadNotFound(req.GetThreadId())
	}
	if err != nil {
		return nil, err
	}
	return &socialv1.SuccessResponse{Success: true}, nil
}

// threadInsights answers the thread's counts to its author.
func (s *service) threadInsights(ctx context.Context, call *sdk.Call, req *socialv1.GetThreadInsightsRequest) (*socialv1.InsightsResponse, error) {
	metrics, err := parseMetrics(req.GetMetric())
	if err != nil {
		return nil, err
	}
	id, ok := sdk.ParseID(req.GetThreadId())
	if !ok {
		return nil, threadNotFound(req.GetThreadId())
	}
	c, err := socialdb.New(s.pool).ThreadCounts(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, threadNotFound(req.GetThreadId())
	}
	if err != nil {
		return nil, err
	}
	if c.AuthorID != call.Principal().UserID {
		return nil, sdk.Errorf(http.StatusForbidden, 10, 0, "Only the author of thread %s may read its insights.", req.GetThreadId())
	}
	return insights(metrics, counts{Views: c.Views, Likes: c.Likes, Replies: c.Replies}), nil
}

func threadProto(r socialdb.SocialThread) *socialv1.Thread {
	return &socialv1.Thread{
		Id: strconv.FormatInt(r.ID, 10), Text: r.Text, AuthorId: r.AuthorID,
		CreatedTime: r.CreatedAt.Time.UTC().Format(time.RFC3339), ReplyTo: idString(r.ReplyTo),
	}
}

func threadNotFound(id string) error { return sdk.NotFound("Thread " + id) }

func idString(id *int64) string {
	if id == nil {
		return ""
	}
	return strconv.FormatInt(*id, 10)
}
