package main

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	bookv1 "github.com/svcplatform/svc/gen/svc/book/v1"
	"github.com/svcplatform/svc/internal/groupcommit"
	"github.com/svcplatform/svc/internal/outbox"
	"github.com/svcplatform/svc/internal/piperead"
	"github.com/svcplatform/svc/internal/pipetx"
	"github.com/svcplatform/svc/internal/readpool"
	"github.com/svcplatform/svc/plugins/book/internal/bookdb"
	"github.com/svcplatform/svc/sdk"
)

// EventPostCreated is emitted when a post is published. Its data is
// {postId, pageId, content, audience}, all strings, built by CreatePost from
// the post it writes.
const EventPostCreated = "book.post.created"

type service struct {
	pool *pgxpool.Pool // the primary: writes
	db   *readpool.DB  // reads, from a replica when the gateway allows
	// posts commits the posts written at once together (pipetx.Group).
	posts *pipetx.Group
	// lists sends the list reads made at once together, per pool
	// (piperead): the primary's, and a replica's once one serves.
	lists, replicaLists *piperead.Reads
	replicaOnce         sync.Once
}

// postBatches bound the group commit of posts: one batch at a time, so
// the posts written while it commits make the next one.
var postBatches = groupcommit.Options{MaxRunning: 1, MaxBatch: 64}

// listBatches bound the pipelines of list reads.
var listBatches = groupcommit.Options{MaxRunning: 1, MaxBatch: 32}

func newService(pool *pgxpool.Pool, db *readpool.DB) *service {
	return &service{pool: pool, db: db, posts: pipetx.NewGroup(pool, postBatches), lists: piperead.New(pool, listBatches)}
}

// listsOf returns the list reads of db, the primary or the replica.
func (s *service) listsOf(db *pgxpool.Pool) *piperead.Reads {
	if db == s.pool {
		return s.lists
	}
	s.replicaOnce.Do(func() { s.replicaLists = piperead.New(db, listBatches) })
	return s.replicaLists
}

func (s *service) register(p *sdk.Plugin) {
	methods := bookv1.File_svc_book_v1_book_proto.Services().ByName("BookService").Methods()
	sdk.Handle(p, methods.ByName("CreatePost"), s.createPost)
	sdk.Handle(p, methods.ByName("ListPosts"), s.listPosts)
	sdk.Handle(p, methods.ByName("GetPost"), s.getPost)
	sdk.Handle(p, methods.ByName("PublicPostPage"), s.publicPostPage)
	sdk.Handle(p, methods.ByName("OEmbed"), s.oEmbed)
	sdk.Handle(p, methods.ByName("EmbedScript"), s.embedScript)
}

// createPost publishes a post and emits book.post.created in the same
// transaction. The gateway has already checked the token kind, the
// pages:manage scope and the caller's role on the Page.
func (s *service) createPost(ctx context.Context, call *sdk.Call, req *bookv1.CreatePostRequest) (*bookv1.CreatePostResponse, error) {
	if strings.ContainsRune(req.GetContent(), 0) {
		return nil, sdk.Invalid("content", "Invalid parameter: content must not contain the NUL character.")
	}
	audience := req.GetAudience()
	if audience == "" {
		audience = "everyone"
	}
	principal := call.Principal()
	arg := bookdb.CreatePostParams{
		PageID: req.GetPageId(), AuthorUserID: principal.UserID, AppID: principal.AppID,
		Content: req.GetContent(), Audience: audience, EventID: outbox.NewID(), EventType: EventPostCreated,
	}
	// The post and its event, whose data the statement builds, at once,
	// committed with the posts written beside it.
	var id int64
	err := s.posts.RunOne(ctx, nil, func(tx *pipetx.Tx) error {
		pipetx.Queue(tx.Last(), func(db pipetx.DBTX) { bookdb.New(db).CreatePost(ctx, arg) }).
			QueryRow(func(row pgx.Row) error { return row.Scan(&id) })
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &bookv1.CreatePostResponse{Id: sdk.FormatID(id)}, nil
}

// listPosts pages through a Page's posts, newest first.
func (s *service) listPosts(ctx context.Context, call *sdk.Call, req *bookv1.ListPostsRequest) (*bookv1.ListPostsResponse, error) {
	w, err := sdk.ParseWindow(req.GetLimit(), req.GetAfter(), req.GetBefore())
	if err != nil {
		return nil, err
	}
	list := takeList(call)
	var q bookdb.PostQuery
	switch {
	case w.After != 0:
		q = bookdb.PostsAfter(bookdb.ListPostsAfterParams{PageID: req.GetPageId(), Cursor: w.After, Lim: w.Fetch()})
	case w.Before != 0:
		q = bookdb.PostsBefore(bookdb.ListPostsBeforeParams{PageID: req.GetPageId(), Cursor: w.Before, Lim: w.Fetch()})
	default:
		q = bookdb.PostsFirst(bookdb.ListPostsFirstParams{PageID: req.GetPageId(), Lim: w.Fetch()})
	}
	err = s.db.Read(ctx, func(db *pgxpool.Pool) error {
		// The read goes with the others made at once (piperead).
		return s.listsOf(db).Query(ctx, q.SQL, q.Args, func(rows pgx.Rows) error {
			list.start(w.Fetch()) // again, when a failed replica's read is retried on the primary
			return bookdb.EachPost(rows, list.add)
		})
	})
	if err != nil {
		return nil, err
	}
	return list.answer(w), nil
}

// getPost reads one post; a post of a Page the caller has no access to is
// reported as not found, so its existence is not revealed.
func (s *service) getPost(ctx context.Context, call *sdk.Call, req *bookv1.GetPostRequest) (*bookv1.Post, error) {
	id, ok := sdk.ParseID(req.GetPostId())
	if !ok {
		return nil, sdk.NotFound("Post " + req.GetPostId())
	}
	var row bookdb.BookPost
	err := s.db.Read(ctx, func(db *pgxpool.Pool) (err error) {
		row, err = bookdb.New(db).GetPost(ctx, id)
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, sdk.NotFound("Post " + req.GetPostId())
	}
	if err != nil {
		return nil, err
	}
	p := call.Principal()
	// The post is the Page's: the gateway decides who may see it (anyone
	// with a role on the Page, or through an app linked to it); to anyone
	// else it does not exist.
	_, err = call.Host().PageAccess(ctx, sdk.PageQuery{PageID: row.PageID, UserID: p.UserID, AppID: p.AppID, Need: sdk.PageRoleLinked})
	if errors.Is(err, sdk.ErrPageRefused) {
		return nil, sdk.NotFound("Post " + req.GetPostId())
	}
	if err != nil {
		return nil, err
	}
	return toProto(row), nil
}

func toProto(r bookdb.BookPost) *bookv1.Post {
	return &bookv1.Post{
		Id: sdk.FormatID(r.ID), PageId: r.PageID, Content: r.Content, Audience: r.Audience,
		CreatedTime: string(appendCreatedTime(nil, r.CreatedAt)),
	}
}

// appendCreatedTime appends a post's created_time as the Graph shows it:
// RFC 3339, in UTC.
func appendCreatedTime(b []byte, t pgtype.Timestamptz) []byte {
	return t.Time.UTC().AppendFormat(b, time.RFC3339)
}
