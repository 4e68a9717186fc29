package auth

import (
	"context"
	"fmt"

	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/gateway/internal/identity"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// adminLabel names the one admin credential in core.credentials.
const adminLabel = "admin"

// EnsureAdminToken makes the operator's admin token valid. With a configured
// token (SVC_ADMIN_TOKEN) its hash replaces the stored one at every start.
// Without, the first gateway to start generates one and returns it with
// generated true — the only time it exists in plain, for the caller to write
// into the dev credentials (or the data folder); later starts return "".
// Only its SHA-256 is stored.
func EnsureAdminToken(ctx context.Context, q *coredb.Queries, configured string) (plain string, generated bool, err error) {
	label := adminLabel
	kind := int16(pluginv1.TokenKind_TOKEN_KIND_ADMIN)
	if configured != "" {
		if err := q.ReplaceLabeledCredential(ctx, coredb.ReplaceLabeledCredentialParams{
			TokenHash: identity.HashToken(configured), Kind: kind, Label: &label}); err != nil {
			return "", false, fmt.Errorf("store admin token: %w", err)
		}
		return configured, false, nil
	}
	plain, hash := identity.NewToken(identity.PrefixAdminToken)
	n, err := q.InsertLabeledCredentialIfAbsent(ctx, coredb.InsertLabeledCredentialIfAbsentParams{
		TokenHash: hash, Kind: kind, Label: &label})
	if err != nil {
		return "", false, fmt.Errorf("store admin token: %w", err)
	}
	if n == 0 {
		return "", false, nil
	}
	return plain, true, nil
}

// RotateAdminToken replaces the admin token with a new one and returns it.
// The old one stops working (within the cache bound on other gateways).
func RotateAdminToken(ctx context.Context, q *coredb.Queries) (string, error) {
	label := adminLabel
	plain, hash := identity.NewToken(identity.PrefixAdminToken)
	if err := q.ReplaceLabeledCredential(ctx, coredb.ReplaceLabeledCredentialParams{
		TokenHash: hash, Kind: int16(pluginv1.TokenKind_TOKEN_KIND_ADMIN), Label: &label}); err != nil {
		return "", fmt.Errorf("rotate admin token: %w", err)
	}
	return plain, nil
}
