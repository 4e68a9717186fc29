package main

import (
	"context"
	"errors"
	"sync"

	"github.com/jackc/pgx/v5"

	adsv1 "github.com/svcplatform/svc/gen/svc/ads/v1"
	"github.com/svcplatform/svc/plugins/ads/internal/adsdb"
	"github.com/svcplatform/svc/sdk"
)

// matchWorkers bounds the host calls that look people up at once while an
// upload of user ids is matched.
const matchWorkers = 8

func (s *service) createCustomAudience(ctx context.Context, call *sdk.Call, req *adsv1.CreateCustomAudienceRequest) (*adsv1.CreatedResponse, error) {
	for _, f := range [][2]string{{"name", req.GetName()}, {"description", req.GetDescription()}} {
		if err := plainText(f[0], f[1]); err != nil {
			return nil, err
		}
	}
	acct, err := s.ownedAccount(ctx, call, req.GetAdAccountId())
	if err != nil {
		return nil, err
	}
	row, err := adsdb.New(s.pool).InsertCustomAudience(ctx, adsdb.InsertCustomAudienceParams{AdAccountID: acct.ID, Name: req.GetName(), Description: req.GetDescription()})
	if err != nil {
		return nil, err
	}
	return &adsv1.CreatedResponse{Id: sdk.FormatID(row.ID)}, nil
}

// ownedAudience reads a custom audience of an ad account the caller may
// use (mayUse); any other, like one that does not exist, is not found.
func (s *service) ownedAudience(ctx context.Context, call *sdk.Call, id string) (adsdb.GetCustomAudienceRow, error) {
	notFound := sdk.NotFound("Custom audience " + id)
	n, ok := sdk.ParseID(id)
	if !ok {
		return adsdb.GetCustomAudienceRow{}, notFound
	}
	row, err := adsdb.New(s.pool).GetCustomAudience(ctx, n)
	if errors.Is(err, pgx.ErrNoRows) {
		return adsdb.GetCustomAudienceRow{}, notFound
	}
	if err != nil {
		return row, err
	}
	if ok, err := mayUse(ctx, call, row.BusinessID, row.AdAccountID); err != nil || !ok {
		return adsdb.GetCustomAudienceRow{}, errOr(err, notFound)
	}
	return row, nil
}

// addCustomAudienceUsers stores the hashes of an upload, each marked
// matched when it names a person of the platform. People have no email or
// phone on the platform yet, so only USER_ID entries of existing users
// match; EMAIL_SHA256 and PHONE_SHA256 entries are kept (they will match
// once people give them) and match no one today.
func (s *service) addCustomAudienceUsers(ctx context.Context, call *sdk.Call, req *adsv1.AddCustomAudienceUsersRequest) (*adsv1.AddCustomAudienceUsersResponse, error) {
	aud, err := s.ownedAudience(ctx, call, req.GetAudienceId())
	if err != nil {
		return nil, err
	}
	schema := req.GetSchema()
	seen := map[string]bool{}
	var hashes [][]byte
	var plainIDs []string
	invalid := int64(0)
	for _, entry := range req.GetData() {
		h, ok := entryHash(schema, entry)
		if !ok {
			invalid++
			continue
		}
		if seen[string(h)] {
			continue
		}
		seen[string(h)] = true
		hashes = append(hashes, h)
		if schema == schemaUserID {
			plainIDs = append(plainIDs, entry)
		}
	}
	matched := make([]bool, len(hashes))
	if schema == schemaUserID {
		if err := s.matchPeople(ctx, call, plainIDs, matched); err != nil {
			return nil, err
		}
	}
	if len(hashes) > 0 {
		if err := adsdb.New(s.pool).AddAudienceMembers(ctx, adsdb.AddAudienceMembersParams{AdAccountID: aud.AdAccountID, AudienceID: aud.ID,
			Schema: schema, Hashes: hashes, Matched: matched}); err != nil {
			return nil, err
		}
	}
	return &adsv1.AddCustomAudienceUsersResponse{AudienceId: req.GetAudienceId(), NumReceived: int64(len(req.GetData())), NumInvalidEntries: invalid}, nil
}

// matchPeople sets matched[i] when ids[i] names a user of the platform,
// asking the host (the plugin knows people only by its calls); the ids are
// not kept.
func (s *service) matchPeople(ctx context.Context, call *sdk.Call, ids []string, matched []bool) error {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		next     = make(chan int)
	)
	for range min(matchWorkers, len(ids)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				u, err := call.Host().UserInfo(ctx, ids[i])
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				matched[i] = err == nil && u.Exists
				mu.Unlock()
			}
		}()
	}
	for i := range ids {
		next <- i
	}
	close(next)
	wg.Wait()
	return firstErr
}

func (s *service) getCustomAudience(ctx context.Context, call *sdk.Call, req *adsv1.GetCustomAudienceRequest) (*adsv1.CustomAudience, error) {
	aud, err := s.ownedAudience(ctx, call, req.GetAudienceId())
	if err != nil {
		return nil, err
	}
	n, err := adsdb.New(s.pool).AudienceMatched(ctx, adsdb.AudienceMatchedParams{AdAccountID: aud.AdAccountID, AudienceID: aud.ID})
	if err != nil {
		return nil, err
	}
	return &adsv1.CustomAudience{Id: sdk.FormatID(aud.ID), AdAccountId: sdk.FormatID(aud.AdAccountID), Name: aud.Name,
		Description: aud.Description, ApproximateCount: approximateCount(n, aud.IsSandbox), CreatedTime: rfc3339(aud.CreatedAt)}, nil
}

// approximateCount is the number of people an audience matched as its
// advertiser sees it. On a sandbox ad account it is exact: a developer must
// see what their hashes matched. On a live one it is rounded for privacy,
// as Meta rounds: below 1,000 it answers 1,000, so that a small upload
// cannot tell whether one given person is on the platform; above, it keeps
// two significant digits, rounded down (12,345 is 12,000).
func approximateCount(matched int64, sandbox bool) int64 {
	if sandbox {
		return matched
	}
	if matched < 1000 {
		return 1000
	}
	unit := int64(1)
	for matched/unit >= 100 {
		unit *= 10
	}
	return matched / unit * unit
}
