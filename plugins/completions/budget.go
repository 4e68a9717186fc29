package main

import (
	"context"
	"math"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	completionsv1 "github.com/svcplatform/svc/gen/svc/completions/v1"
	"github.com/svcplatform/svc/plugins/completions/internal/completionsdb"
	"github.com/svcplatform/svc/sdk"
)

// getBudget reads app/{app_id}/completions_budget. The gateway has checked
// the caller's standing on the app (app_role MEMBER).
func (s *service) getBudget(ctx context.Context, _ *sdk.Call, in *completionsv1.GetBudgetRequest) (*completionsv1.Budget, error) {
	l, err := s.quota.limitsOf(ctx, in.GetAppId(), true)
	if err != nil {
		return nil, err
	}
	// Read your own writes: what this process counted goes in first.
	if err := s.usage.flush(ctx); err != nil {
		return nil, err
	}
	month := monthStart(s.now())
	used, err := completionsdb.New(s.db).UsedTokens(ctx, completionsdb.UsedTokensParams{
		AppID: in.GetAppId(), Since: pgtype.Date{Time: month, Valid: true},
	})
	if err != nil {
		return nil, err
	}
	return &completionsv1.Budget{
		MonthlyTokens: float64(l.monthlyTokens), RequestsPerMinute: float64(l.requestsPerMinute),
		UsedTokens: float64(used), ResetsAt: month.AddDate(0, 1, 0).Format(time.RFC3339), Source: l.source,
	}, nil
}

// setBudget writes app/{app_id}/completions_budget (app_role ADMIN).
func (s *service) setBudget(ctx context.Context, _ *sdk.Call, in *completionsv1.SetBudgetRequest) (*completionsv1.SetBudgetResponse, error) {
	p := completionsdb.SetBudgetParams{AppID: in.GetAppId()}
	var err error
	if p.MonthlyTokens, err = wholeNumber("monthly_tokens", in.MonthlyTokens); err != nil {
		return nil, err
	}
	if p.RequestsPerMinute, err = wholeNumber("requests_per_minute", in.RequestsPerMinute); err != nil {
		return nil, err
	}
	if p.MonthlyTokens == nil && p.RequestsPerMinute == nil {
		return nil, sdk.Invalid("monthly_tokens", "Invalid parameter: give monthly_tokens, requests_per_minute or both.")
	}
	if err := withinOperators("monthly_tokens", p.MonthlyTokens, s.quota.defaults.monthlyTokens); err != nil {
		return nil, err
	}
	if err := withinOperators("requests_per_minute", p.RequestsPerMinute, s.quota.defaults.requestsPerMinute); err != nil {
		return nil, err
	}
	q := completionsdb.New(s.db)
	if err := q.SetBudget(ctx, p); err != nil {
		return nil, err
	}
	if p.MonthlyTokens != nil {
		// The month's counter starts again from recorded usage (this
		// process's own, written first), under the new budget.
		if err := s.usage.flush(ctx); err != nil {
			return nil, err
		}
		if err := q.ResetTokenLeases(ctx, in.GetAppId()); err != nil {
			return nil, err
		}
	}
	s.quota.forget(in.GetAppId())
	return &completionsv1.SetBudgetResponse{Success: true}, nil
}

// withinOperators refuses an app's limit above the operator's configured
// one: an app may lower what the operator allows, never lift it (CONTRACT
// §15). 0 is always accepted: it means "the operator's value".
func withinOperators(field string, v *int64, operator int64) error {
	if v == nil || operator == 0 || *v <= operator {
		return nil
	}
	return sdk.Invalid(field, "Invalid parameter: %s %d is above the operator's limit of %d; send at most %d, or 0 for the operator's value.",
		field, *v, operator, operator)
}

// wholeNumber checks an optional count (the proto bounds its range).
func wholeNumber(field string, v *float64) (*int64, error) {
	if v == nil {
		return nil, nil
	}
	if *v != math.Trunc(*v) {
		return nil, sdk.Invalid(field, "Invalid parameter: %s must be a whole number (0 for the operator's value).", field)
	}
	n := int64(*v)
	return &n, nil
}

// listUpstreams answers GET /api/admin/completions/upstreams (the
// operator's admin token).
func (s *service) listUpstreams(context.Context, *sdk.Call, *completionsv1.ListUpstreamsRequest) (*completionsv1.ListUpstreamsResponse, error) {
	res := &completionsv1.ListUpstreamsResponse{Upstreams: make([]*completionsv1.Upstream, 0, len(s.router.upstreams))}
	for _, u := range s.router.upstreams {
		st := u.breaker.snapshot()
		out := &completionsv1.Upstream{Name: u.name, State: st.State, LastError: st.LastError, Models: u.models}
		if !st.Until.IsZero() {
			out.CooldownUntil = st.Until.UTC().Format(time.RFC3339Nano)
		}
		res.Upstreams = append(res.Upstreams, out)
	}
	return res, nil
}

// pruneRound deletes counters of windows that are over (run hourly by
// prune.Every from main).
func (s *service) pruneRound(ctx context.Context) error {
	return completionsdb.New(s.db).PruneQuotaLeases(ctx)
}
