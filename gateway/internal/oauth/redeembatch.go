package oauth

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/internal/groupcommit"
)

// Batching of code redemptions. An exchange's cost in PostgreSQL is mostly
// its statement and its commit, so exchanges that arrive while others are
// being redeemed wait for them and go together, as one RedeemCodes
// statement (internal/groupcommit): one round trip and one commit for the
// lot. An exchange that finds no batch running goes at once, so a quiet
// gateway adds no wait; none is answered before its commit.
var redeemBatches = groupcommit.Options{
	// One batch at a time, measured against two (benchreport -only token,
	// alternated, busy machine): gateway 136/130 against 171/188 µs and
	// PostgreSQL 146/120 against 199/216 µs of CPU per exchange; a second
	// batch halves the batches' size and doubles their commits. Measured
	// again under the bench lock, quieter (2026-11-28): no more exchanges/s
	// and more CPU per exchange (docs/design/performance.md, "Rejected").
	MaxRunning: 1,
	MaxBatch:   64,
	Timeout:    10 * time.Second,
}

// redemption is one exchange's part of a batch, and its outcome.
type redemption struct {
	p     coredb.RedeemCodeParams
	row   coredb.RedeemCodeRow
	found bool // false: refused (RedeemCode's pgx.ErrNoRows)
	err   error
}

// redeem redeems one code as RedeemCode does, within a batch.
func (s *Server) redeem(ctx context.Context, p coredb.RedeemCodeParams) (coredb.RedeemCodeRow, error) {
	r := &redemption{p: p}
	s.redeems.Do(ctx, r)
	if r.err != nil {
		return coredb.RedeemCodeRow{}, r.err
	}
	if !r.found {
		return coredb.RedeemCodeRow{}, pgx.ErrNoRows
	}
	return r.row, nil
}

// redeemBatch redeems the batch and settles each redemption: one RedeemCode
// alone, several with RedeemCodes. If the batch statement fails (a
// deadlock between two batches naming the same codes, say), each is
// redeemed alone, so one exchange's trouble is not the others'.
func (s *Server) redeemBatch(ctx context.Context, batch []*redemption) {
	if len(batch) == 1 {
		s.redeemOne(ctx, batch[0])
		return
	}
	arg := coredb.RedeemCodesParams{
		Ords:         make([]int32, len(batch)),
		CodeHashes:   make([][]byte, len(batch)),
		AppIds:       make([]int64, len(batch)),
		RedirectUris: make([]string, len(batch)), CodeChallenges: make([]string, len(batch)),
		AccessHashes: make([][]byte, len(batch)), RefreshHashes: make([][]byte, len(batch)),
		// The batch's first exchange's expiries: the others' were computed
		// no earlier, and a batch runs within milliseconds.
		AccessExpiresAt: batch[0].p.AccessExpiresAt, RefreshExpiresAt: batch[0].p.RefreshExpiresAt,
	}
	for i, r := range batch {
		arg.Ords[i] = int32(i)
		arg.CodeHashes[i], arg.AppIds[i] = r.p.CodeHash, r.p.AppID
		arg.RedirectUris[i], arg.CodeChallenges[i] = r.p.RedirectUri, r.p.CodeChallenge
		arg.AccessHashes[i], arg.RefreshHashes[i] = r.p.AccessHash, r.p.RefreshHash
	}
	rows, err := s.generic.RedeemCodes(ctx, arg)
	if err != nil {
		for _, r := range batch {
			s.redeemOne(ctx, r)
		}
		return
	}
	for _, row := range rows {
		if row.Ord < 0 || int(row.Ord) >= len(batch) {
			continue
		}
		r := batch[row.Ord]
		r.found = true
		r.row = coredb.RedeemCodeRow{GrantID: row.GrantID, UserID: row.UserID, Scopes: row.Scopes, Nonce: row.Nonce, AuthTime: row.AuthTime}
	}
}

func (s *Server) redeemOne(ctx context.Context, r *redemption) {
	row, err := s.q.RedeemCode(ctx, r.p)
	switch {
	case err == nil:
		r.row, r.found = row, true
	case errors.Is(err, pgx.ErrNoRows):
	default:
		r.err = err
	}
}
