// Package floor is the single-process floor of the Graph read, the post
// write and the Page message send: a plain net/http server with a pgx pool
// that answers exactly GET /api/v1/graph?node=page/<id>/posts&limit=N, POST
// …?node=page/<id>/posts and POST …?node=page/<id>/messages by running the
// very statements the book plugin runs (ListPostsFirst and CreatePost, read
// from its sqlc query file) or svcchat's send transaction (SendTx), and
// writing the JSON the gateway writes, with encoding/json. It is what a
// straightforward Go server reaches on the same machine against the same
// database, without the gateway, the plugin process and the lane between
// them, and without the platform's work (authentication, limits, routing,
// access rules, validation, metrics): a reference for make bench
// (benchreport serve-floor), not a design. The bearer token is compared to a
// constant; nothing else is checked.
package floor

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/bench"
	"github.com/svcplatform/svc/internal/outbox"
)

// Path is the Graph endpoint's path, as the gateway serves it.
const Path = "/api/v1/graph"

// MaxConns is the pool size: the book plugin's (migrate.Open and
// readpool.Open in plugins/book/main.go).
const MaxConns = 16

// BookQueries are where book's statements live, from the repository's root
// (the first that exists wins, as for the pgbench references).
var BookQueries = []string{"plugins/book/sql/queries/posts.sql", "sql/book/queries/posts.sql"}

// Config is what the floor serves with.
type Config struct {
	// PublicURL starts the paging links, as the gateway's public URL
	// starts its own (the answer is then the gateway's byte for byte).
	PublicURL string
	// Token is the bearer token every request must carry.
	Token string
	// UserID and AppID are a post's author and app: the principal the
	// gateway hands book for the token.
	UserID, AppID string
	// List and Create are ListPostsFirst and CreatePost with positional
	// parameters (Queries).
	List, Create string
	// Send is SendTx with positional parameters (SendStatements); without
	// it the floor answers no send.
	Send []string
}

// Queries reads ListPostsFirst and CreatePost from the first of paths that
// exists (BookQueries, relative to the repository's root) and binds their
// named parameters to positional ones, in the order Server passes them.
func Queries(paths []string) (list, create string, err error) {
	list, _, err = bench.ReadNamedQuery("ListPostsFirst", paths...)
	if err == nil {
		list, err = bench.BindNamed(list, map[string]string{"page_id": "$1", "lim": "$2"})
	}
	if err != nil {
		return "", "", err
	}
	create, _, err = bench.ReadNamedQuery("CreatePost", paths...)
	if err == nil {
		create, err = bench.BindNamed(create, map[string]string{"page_id": "$1", "author_user_id": "$2", "app_id": "$3",
			"content": "$4", "audience": "$5", "event_id": "$6", "event_type": "$7"})
	}
	if err != nil {
		return "", "", err
	}
	return list, create, nil
}

// Server answers the Graph read and the post write from pool.
type Server struct {
	cfg  Config
	pool *pgxpool.Pool
}

// New returns the floor's handler on pool.
func New(cfg Config, pool *pgxpool.Pool) *Server {
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	return &Server{cfg: cfg, pool: pool}
}

// Post is one post as the Graph shows it (book.v1.Post's fields in
// order, under their proto names).
type Post struct {
	ID          string `json:"id"`
	PageID      string `json:"page_id"`
	Content     string `json:"content"`
	Audience    string `json:"audience"`
	CreatedTime string `json:"created_time"`
}

// List is the Graph's answer to a list read.
type List struct {
	Data   []Post `json:"data"`
	Paging Paging `json:"paging"`
}

// Paging is the Graph's paging object of a first page.
type Paging struct {
	Cursors struct {
		After  string `json:"after"`
		Before string `json:"before"`
	} `json:"cursors"`
	Next string `json:"next,omitempty"`
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != Path {
		http.NotFound(w, r)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+s.cfg.Token {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	q := r.URL.Query()
	node := q.Get("node")
	page, isPage := strings.CutPrefix(node, "page/")
	page, edge, _ := strings.Cut(page, "/")
	switch {
	case !isPage || page == "":
	case edge == "posts" && r.Method == http.MethodGet:
		s.list(w, r, node, page, q)
		return
	case edge == "posts" && r.Method == http.MethodPost:
		s.create(w, r, page)
		return
	case edge == "messages" && r.Method == http.MethodPost && s.cfg.Send != nil:
		s.send(w, r, page)
		return
	}
	http.Error(w, "the floor answers GET and POST node=page/<id>/posts and POST node=page/<id>/messages only", http.StatusBadRequest)
}

// list answers the first page of a Page's posts, newest first.
func (s *Server) list(w http.ResponseWriter, r *http.Request, node, page string, q url.Values) {
	limit := 25
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			http.Error(w, "limit must be 1 to 100", http.StatusBadRequest)
			return
		}
		limit = n
	}
	if q.Has("after") || q.Has("before") {
		http.Error(w, "the floor answers first pages only", http.StatusBadRequest)
		return
	}
	rows, err := s.pool.Query(r.Context(), s.cfg.List, page, limit+1)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer rows.Close()
	var (
		ids   []int64
		res   = List{Data: []Post{}}
		id    int64
		p     Post
		other string
		at    time.Time
	)
	for rows.Next() {
		// SELECT *: id, page_id, author_user_id, app_id, content, audience, created_at.
		if err := rows.Scan(&id, &p.PageID, &other, &other, &p.Content, &p.Audience, &at); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		p.ID = strconv.FormatInt(id, 10)
		p.CreatedTime = at.UTC().Format(time.RFC3339)
		ids = append(ids, id)
		res.Data = append(res.Data, p)
	}
	if err := rows.Err(); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	more := len(res.Data) > limit
	if more {
		res.Data, ids = res.Data[:limit], ids[:limit]
	}
	if len(ids) > 0 {
		res.Paging.Cursors.Before = cursor(ids[0])
		res.Paging.Cursors.After = cursor(ids[len(ids)-1])
		if more {
			next := url.Values{}
			for k, v := range q {
				next[k] = v
			}
			next.Set("after", res.Paging.Cursors.After)
			next.Set("node", node)
			res.Paging.Next = s.cfg.PublicURL + Path + "?" + next.Encode()
		}
	}
	writeJSON(w, res)
}

// cursor is the Graph's cursor of a post id (sdk.Page's): base64url of
// its decimal form.
func cursor(id int64) string {
	return base64.RawURLEncoding.EncodeToString(strconv.AppendInt(nil, id, 10))
}

// create writes a post and its book.post.created event (CreatePost does
// both) and answers its id.
func (s *Server) create(w http.ResponseWriter, r *http.Request, page string) {
	var in struct {
		Content  string `json:"content"`
		Audience string `json:"audience"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Content == "" {
		http.Error(w, "a JSON body with content is required", http.StatusBadRequest)
		return
	}
	if in.Audience == "" {
		in.Audience = "everyone"
	}
	var id int64
	err := s.pool.QueryRow(r.Context(), s.cfg.Create, page, s.cfg.UserID, s.cfg.AppID, in.Content, in.Audience,
		outbox.NewID(), "book.post.created").Scan(&id)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, struct {
		ID string `json:"id"`
	}{strconv.FormatInt(id, 10)})
}

// writeJSON writes v as the gateway writes its documents: JSON escaping
// only what JSON requires (no HTML escaping), no trailing newline.
func writeJSON(w http.ResponseWriter, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// Serve runs the floor on addr against the database at dsn until ctx ends,
// printing "listening on ADDR" to out once it accepts.
func Serve(ctx context.Context, dsn, addr string, cfg Config, out io.Writer) error {
	pcfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return err
	}
	pcfg.MaxConns = MaxConns
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := pool.Ping(ctx); err != nil {
		return fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: New(cfg, pool), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(out, "listening on %s\n", ln.Addr())
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
