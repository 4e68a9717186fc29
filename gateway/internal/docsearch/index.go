package docsearch

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"unicode"

	"connectrpc.com/connect"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/coredb"
	catalogv1 "github.com/svcplatform/svc/gen/svc/catalog/v1"
	"github.com/svcplatform/svc/gen/svc/catalog/v1/catalogv1connect"
)

// MaxResults bounds one search's answer.
const MaxResults = 20

// MaxQueryLength bounds q, in characters (as the proto's rule says).
const MaxQueryLength = 200

// Index is the search index in core.docs_sections.
type Index struct {
	pool *pgxpool.Pool
}

// NewIndex returns the index stored in pool's database.
func NewIndex(pool *pgxpool.Pool) *Index { return &Index{pool: pool} }

// Refresh makes the index hold exactly entries (the first of a repeated
// path wins), in one transaction, serialised with other gateways.
func (ix *Index) Refresh(ctx context.Context, entries []Entry) error {
	var p coredb.UpsertDocsSectionsParams
	seen := make(map[string]bool, len(entries))
	for _, e := range entries {
		if seen[e.Path] {
			continue
		}
		seen[e.Path] = true
		p.Paths = append(p.Paths, e.Path)
		p.Kinds = append(p.Kinds, e.Kind)
		p.Titles = append(p.Titles, e.Title)
		p.Bodies = append(p.Bodies, e.Body)
	}
	return pgx.BeginFunc(ctx, ix.pool, func(tx pgx.Tx) error {
		q := coredb.New(tx)
		if err := q.LockDocsSections(ctx); err != nil {
			return fmt.Errorf("lock docs index: %w", err)
		}
		if err := q.UpsertDocsSections(ctx, p); err != nil {
			return fmt.Errorf("write docs index: %w", err)
		}
		if p.Paths == nil {
			p.Paths = []string{}
		}
		if err := q.DeleteDocsSectionsExcept(ctx, p.Paths); err != nil {
			return fmt.Errorf("prune docs index: %w", err)
		}
		return nil
	})
}

// Hit is one search result.
type Hit struct {
	Title, Path, Snippet string
}

// CheckQuery refuses a q that names nothing to search for, naming q.
// Lengths are counted in characters, as protovalidate counts them.
func CheckQuery(q string) error {
	if strings.IndexFunc(q, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
		return apierr.Invalid("q", "The parameter q must contain a word to search for.")
	}
	if n := len([]rune(q)); n > MaxQueryLength {
		return apierr.Invalid("q", "The parameter q is %d characters long; at most %d are allowed.", n, MaxQueryLength)
	}
	return nil
}

// Search answers the best sections for q, best first.
func (ix *Index) Search(ctx context.Context, q string) ([]Hit, error) {
	if err := CheckQuery(q); err != nil {
		return nil, err
	}
	rows, err := coredb.New(ix.pool).SearchDocsSections(ctx, coredb.SearchDocsSectionsParams{Query: q, MaxResults: MaxResults})
	if err != nil {
		return nil, fmt.Errorf("search docs: %w", err)
	}
	out := make([]Hit, 0, len(rows))
	for _, r := range rows {
		out = append(out, Hit{Title: r.Title, Path: r.Path, Snippet: r.Snippet})
	}
	return out, nil
}

// Service implements svc.catalog.v1.DocsService.
type Service struct {
	catalogv1connect.UnimplementedDocsServiceHandler
	index *Index
}

// NewService serves searches of index.
func NewService(index *Index) *Service { return &Service{index: index} }

// SearchDocs answers GET /api/developers/docs/search?q=.
func (s *Service) SearchDocs(ctx context.Context, req *connect.Request[catalogv1.SearchDocsRequest]) (*connect.Response[catalogv1.SearchDocsResponse], error) {
	hits, err := s.index.Search(ctx, req.Msg.GetQ())
	if err != nil {
		return nil, err
	}
	res := &catalogv1.SearchDocsResponse{Data: make([]*catalogv1.DocsHit, 0, len(hits))}
	for _, h := range hits {
		res.Data = append(res.Data, &catalogv1.DocsHit{Title: h.Title, Path: h.Path, Snippet: h.Snippet})
	}
	return connect.NewResponse(res), nil
}

// Refresher keeps the index current: Trigger asks for a refresh, Run
// performs them one at a time, coalescing triggers that arrive meanwhile.
type Refresher struct {
	index   *Index
	entries func() ([]Entry, error)
	log     *slog.Logger
	wake    chan struct{}
}

// NewRefresher refreshes index with what entries answers at the time.
func NewRefresher(index *Index, entries func() ([]Entry, error), log *slog.Logger) *Refresher {
	return &Refresher{index: index, entries: entries, log: log, wake: make(chan struct{}, 1)}
}

// Trigger asks for a refresh; it never blocks.
func (r *Refresher) Trigger() {
	select {
	case r.wake <- struct{}{}:
	default: // one is pending already: it will see the latest state
	}
}

// Run refreshes on each trigger until ctx ends. A failed refresh is logged
// and the index keeps its previous rows until the next trigger.
func (r *Refresher) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		}
		if err := r.refresh(ctx); err != nil && ctx.Err() == nil {
			r.log.Error("docs search index refresh failed", "error", err)
		}
	}
}

func (r *Refresher) refresh(ctx context.Context) error {
	entries, err := r.entries()
	if err != nil {
		return err
	}
	return r.index.Refresh(ctx, entries)
}
