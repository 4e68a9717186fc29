package identity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/svcplatform/svc/gateway/internal/coredb"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// DebugTokenData is the `data` object of the debug_token Graph operation
// (CONTRACT §2). Times are RFC 3339 (CONTRACT §1); expires_at is null for a
// credential that does not expire (an app key).
type DebugTokenData struct {
	AppID       string     `json:"app_id"`
	Type        string     `json:"type"`
	Application string     `json:"application"`
	ExpiresAt   *time.Time `json:"expires_at"`
	IssuedAt    *time.Time `json:"issued_at"`
	IsValid     bool       `json:"is_valid"`
	Scopes      []string   `json:"scopes"`
	UserID      string     `json:"user_id,omitempty"`
	// GranularScopes are, for a user access token, its Page scopes with the
	// Pages it may act on (CONTRACT §17).
	GranularScopes []GranularScope `json:"granular_scopes,omitempty"`
}

// GranularScope is a scope limited to some targets: the Pages a user access
// token may act on, by id.
type GranularScope struct {
	Scope     string   `json:"scope"`
	TargetIDs []string `json:"target_ids"`
}

// DebugToken describes inputToken to the app callerAppID (the app whose key
// or token made the call). Only the caller's own credentials are described:
// any other token, unknown or of another app or a first-party session, is
// reported as {"is_valid":false} with nothing else, so the operation cannot
// be used to probe other apps' tokens.
func (s *Sessions) DebugToken(ctx context.Context, callerAppID, inputToken string, now time.Time) (DebugTokenData, error) {
	invalid := DebugTokenData{Scopes: []string{}}
	if inputToken == "" {
		return invalid, nil
	}
	row, err := s.q.LookupCredential(ctx, HashToken(inputToken))
	if errors.Is(err, pgx.ErrNoRows) {
		return invalid, nil
	}
	if err != nil {
		return DebugTokenData{}, fmt.Errorf("debug token: %w", err)
	}
	if row.AppID == nil || FormatID(*row.AppID) != callerAppID {
		return invalid, nil
	}
	var typ string
	switch pluginv1.TokenKind(row.Kind) {
	case pluginv1.TokenKind_TOKEN_KIND_USER:
		typ = "USER"
	case pluginv1.TokenKind_TOKEN_KIND_SYSTEM_USER:
		typ = "SYSTEM_USER"
	case pluginv1.TokenKind_TOKEN_KIND_APP_KEY:
		typ = "APP"
	default:
		return invalid, nil
	}
	d := DebugTokenData{AppID: callerAppID, Type: typ, Application: row.AppName, Scopes: row.Scopes}
	if d.Scopes == nil {
		d.Scopes = []string{}
	}
	issued := row.CreatedAt.Time.UTC().Truncate(time.Second)
	d.IssuedAt = &issued
	if row.ExpiresAt.Valid {
		exp := row.ExpiresAt.Time.UTC().Truncate(time.Second)
		d.ExpiresAt = &exp
	}
	if row.UserID != nil {
		d.UserID = FormatID(*row.UserID)
	}
	d.IsValid = !row.RevokedAt.Valid && (d.ExpiresAt == nil || now.Before(*d.ExpiresAt))
	if typ == "USER" && row.UserID != nil {
		if d.GranularScopes, err = s.granularScopes(ctx, row); err != nil {
			return DebugTokenData{}, err
		}
	}
	return d, nil
}

// granularScopes lists a user access token's Page scopes, each with the
// Pages the token may act on: those the person chose for the app, or,
// when no choice was made, every Page the user holds a role on.
func (s *Sessions) granularScopes(ctx context.Context, row coredb.LookupCredentialRow) ([]GranularScope, error) {
	catalog, err := s.Scopes(ctx)
	if err != nil {
		return nil, err
	}
	scopes := catalog.PageScopes(row.Scopes)
	if len(scopes) == 0 {
		return nil, nil
	}
	targets := FormatIDs(row.PageIds)
	if !row.PagesChosen {
		pages, err := (&Pages{store: s.store}).ChoosablePages(ctx, FormatID(*row.UserID))
		if err != nil {
			return nil, err
		}
		targets = make([]string, len(pages))
		for i, p := range pages {
			targets[i] = p.ID
		}
	}
	out := make([]GranularScope, len(scopes))
	for i, sc := range scopes {
		out[i] = GranularScope{Scope: sc, TargetIDs: targets}
	}
	return out, nil
}
