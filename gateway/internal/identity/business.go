package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/svcplatform/svc/gateway/internal/coredb"
)

// Businesses holds business portfolios (CONTRACT §17): their people and
// roles, their assets and their verification; see Service.Businesses.
type Businesses struct{ *store }

// BusinessRole is a person's role on a business, as Meta Business Manager
// names them: an admin manages the business (its people, assets and
// verification); an employee sees it and its assets.
type BusinessRole string

// The roles on a business.
const (
	BusinessAdmin    BusinessRole = "admin"
	BusinessEmployee BusinessRole = "employee"
)

// VerificationStatus is where a business stands in verification.
type VerificationStatus string

// The verification statuses (CONTRACT §17).
const (
	Unverified VerificationStatus = "unverified"
	Pending    VerificationStatus = "pending"
	Verified   VerificationStatus = "verified"
	Rejected   VerificationStatus = "rejected"
)

// VerificationEvent is what moves a business's verification status.
type VerificationEvent string

// The verification events: a business admin's request, staff's decisions.
const (
	RequestVerification VerificationEvent = "request"
	ApproveVerification VerificationEvent = "approve"
	RejectVerification  VerificationEvent = "reject"
)

// verificationTransitions is the whole verification state machine: a
// status and an event give the next status; a pair not listed is refused.
// A rejected business may ask again with new documents; a verified one
// stays verified (as Meta, which does not re-verify on request).
var verificationTransitions = map[VerificationStatus]map[VerificationEvent]VerificationStatus{
	Unverified: {RequestVerification: Pending},
	Pending:    {ApproveVerification: Verified, RejectVerification: Rejected},
	Rejected:   {RequestVerification: Pending},
	Verified:   {},
}

// NextVerificationStatus is the status event moves from; ok is false when
// the state machine does not allow event in from.
func NextVerificationStatus(from VerificationStatus, event VerificationEvent) (VerificationStatus, bool) {
	to, ok := verificationTransitions[from][event]
	return to, ok
}

// ErrVerificationState: the business's verification status does not allow
// the request or decision (a request while pending or verified; a decision
// on a business that is not pending).
var ErrVerificationState = errors.New("identity: the business's verification status does not allow this")

// ErrAssetTaken: the asset belongs to a business already.
var ErrAssetTaken = errors.New("identity: the asset belongs to a business already")

// ErrNotAssetAdmin: the user does not own or administer the asset.
var ErrNotAssetAdmin = errors.New("identity: the user does not own or administer the asset")

// MaxBusinessesPerUser bounds the businesses one person creates (Meta
// allows a person to create a few; ours is generous for tests and demos).
const MaxBusinessesPerUser = 50

// Business is a stored business portfolio.
type Business struct {
	ID                 string
	Name               string
	VerificationStatus VerificationStatus
	// VerificationReason is staff's reason for the last decision.
	VerificationReason string
}

// UserBusiness is a business a user has a role on, with the role.
type UserBusiness struct {
	Business
	Role BusinessRole
}

// BusinessAsset is one asset of a business.
type BusinessAsset struct {
	Type string
	ID   string
	// Name of a Page or app; empty for an ad account (the ads plugin's).
	Name string
}

// BusinessPerson is one person's role on a business.
type BusinessPerson struct {
	UserID string
	Name   string
	Role   BusinessRole
}

// VerificationDocument is one document's metadata: its kind and the
// SHA-256 of its content, never the content.
type VerificationDocument struct {
	Kind   string `json:"kind"`
	SHA256 string `json:"sha256"`
}

// VerificationRequest is what a business sends to be verified.
type VerificationRequest struct {
	LegalName string
	Country   string
	Documents []VerificationDocument
}

// QueuedVerification is a request waiting for staff.
type QueuedVerification struct {
	VerificationRequest
	BusinessID   string
	BusinessName string
	RequestedAt  time.Time
}

// Create makes a business with the user as its admin.
func (s *Businesses) Create(ctx context.Context, userID, name string) (Business, error) {
	uid, err := mustID("user", userID)
	if err != nil {
		return Business{}, err
	}
	if n := utf8.RuneCountInString(name); n == 0 || n > 100 {
		return Business{}, fmt.Errorf("name: give 1 to 100 characters: %w", ErrInvalid)
	}
	var b Business
	err = s.InTx(ctx, func(s *Service) error {
		if _, err := s.q.LockUser(ctx, uid); err != nil {
			return notFound(err, "user "+userID)
		}
		n, err := s.q.CountBusinessesCreatedBy(ctx, &uid)
		if err != nil {
			return err
		}
		if n >= MaxBusinessesPerUser {
			return fmt.Errorf("a person creates at most %d businesses: %w", MaxBusinessesPerUser, ErrLimitReached)
		}
		row, err := s.q.InsertBusiness(ctx, coredb.InsertBusinessParams{Name: name, CreatedBy: &uid})
		if err != nil {
			return err
		}
		b = Business{ID: FormatID(row.ID), Name: row.Name, VerificationStatus: VerificationStatus(row.VerificationStatus)}
		return s.q.PutBusinessRole(ctx, coredb.PutBusinessRoleParams{BusinessID: row.ID, UserID: uid, Role: string(BusinessAdmin)})
	})
	return b, err
}

// Get reads a business.
func (s *Businesses) Get(ctx context.Context, businessID string) (Business, error) {
	id, err := mustID("business", businessID)
	if err != nil {
		return Business{}, err
	}
	row, err := s.q.GetBusiness(ctx, id)
	if err != nil {
		return Business{}, notFound(err, "business "+businessID)
	}
	return Business{ID: FormatID(row.ID), Name: row.Name, VerificationStatus: VerificationStatus(row.VerificationStatus),
		VerificationReason: row.VerificationReason}, nil
}

// Role is the user's role on the business, "" when none; ErrNotFound when
// the business does not exist. The access rule's one question
// (auth.Authenticator.AuthorizeBusiness).
func (s *Businesses) Role(ctx context.Context, businessID, userID string) (BusinessRole, error) {
	bid, ok := ParseID(businessID)
	if !ok {
		return "", fmt.Errorf("business %q: %w", businessID, ErrNotFound)
	}
	uid, _ := ParseID(userID) // 0 matches no role
	r, err := s.q.BusinessRole(ctx, coredb.BusinessRoleParams{BusinessID: bid, UserID: uid})
	if err != nil {
		return "", notFound(err, "business "+businessID)
	}
	return BusinessRole(r), nil
}

// OfUser lists the businesses the user has a role on, in id order, after
// the id afterID (0: from the first), at most limit.
func (s *Businesses) OfUser(ctx context.Context, userID string, afterID int64, limit int) ([]UserBusiness, error) {
	uid, err := mustID("user", userID)
	if err != nil {
		return nil, err
	}
	rows, err := s.q.ListUserBusinesses(ctx, coredb.ListUserBusinessesParams{UserID: uid, AfterID: afterID, MaxRows: int32(limit)})
	if err != nil {
		return nil, err
	}
	out := make([]UserBusiness, len(rows))
	for i, r := range rows {
		out[i] = UserBusiness{Business: Business{ID: FormatID(r.ID), Name: r.Name,
			VerificationStatus: VerificationStatus(r.VerificationStatus)}, Role: BusinessRole(r.Role)}
	}
	return out, nil
}

// People lists the people of a business with their roles.
func (s *Businesses) People(ctx context.Context, businessID string) ([]BusinessPerson, error) {
	id, err := mustID("business", businessID)
	if err != nil {
		return nil, err
	}
	rows, err := s.q.ListBusinessRoles(ctx, id)
	if err != nil {
		return nil, err
	}
	out := make([]BusinessPerson, len(rows))
	for i, r := range rows {
		out[i] = BusinessPerson{UserID: FormatID(r.UserID), Name: r.Name, Role: BusinessRole(r.Role)}
	}
	return out, nil
}

// SetRole gives a user a role on the business or changes it; the last
// admin cannot become an employee (ErrLastAdmin).
func (s *Businesses) SetRole(ctx context.Context, businessID, userID string, role BusinessRole) error {
	bid, err := mustID("business", businessID)
	if err != nil {
		return err
	}
	uid, err := mustID("user", userID)
	if err != nil {
		return err
	}
	if role != BusinessAdmin && role != BusinessEmployee {
		return fmt.Errorf("role %q: %w", role, ErrInvalid)
	}
	return s.InTx(ctx, func(s *Service) error {
		if _, err := s.q.LockBusiness(ctx, bid); err != nil {
			return notFound(err, "business "+businessID)
		}
		if _, err := s.q.LockUser(ctx, uid); err != nil {
			return notFound(err, "user "+userID)
		}
		if role != BusinessAdmin {
			cur, err := s.q.BusinessRole(ctx, coredb.BusinessRoleParams{BusinessID: bid, UserID: uid})
			if err != nil {
				return err
			}
			if n, err := s.q.CountBusinessAdmins(ctx, bid); err != nil {
				return err
			} else if cur == string(BusinessAdmin) && n <= 1 {
				return fmt.Errorf("the last admin of business %s: %w", businessID, ErrLastAdmin)
			}
		}
		return s.q.PutBusinessRole(ctx, coredb.PutBusinessRoleParams{BusinessID: bid, UserID: uid, Role: string(role)})
	})
}

// Assets lists a business's assets (at most 1,000).
func (s *Businesses) Assets(ctx context.Context, businessID string) ([]BusinessAsset, error) {
	id, err := mustID("business", businessID)
	if err != nil {
		return nil, err
	}
	rows, err := s.q.ListBusinessAssets(ctx, id)
	if err != nil {
		return nil, err
	}
	out := make([]BusinessAsset, len(rows))
	for i, r := range rows {
		out[i] = BusinessAsset{Type: r.AssetType, ID: FormatID(r.AssetID), Name: r.Name}
	}
	return out, nil
}

// AddAsset puts an asset in the business for the user. A Page needs the
// user to own or administer it, an app to be its team Admin; an ad account
// lives in the ads plugin, which is asked beforehand (adAccountOwned tells
// whether the user holds it). An asset that does not exist, or that the
// user does not manage, is ErrNotAssetAdmin; one in a business already,
// this one or another, is ErrAssetTaken.
func (s *Businesses) AddAsset(ctx context.Context, businessID, userID, assetType, assetID string, adAccountOwned bool) error {
	bid, err := mustID("business", businessID)
	if err != nil {
		return err
	}
	uid, err := mustID("user", userID)
	if err != nil {
		return err
	}
	aid, ok := ParseID(assetID)
	if !ok {
		return fmt.Errorf("%s %s: %w", assetType, assetID, ErrNotAssetAdmin)
	}
	var manages bool
	switch assetType {
	case "PAGE":
		f, err := s.all.Pages.PageFacts(ctx, assetID, userID, "")
		if err != nil {
			return err
		}
		manages = f.Exists && f.UserManages()
	case "APP":
		r, err := s.all.Apps.TeamRole(ctx, assetID, userID)
		if err != nil {
			return err
		}
		manages = r == TeamAdmin
	case "AD_ACCOUNT":
		manages = adAccountOwned
	default:
		return fmt.Errorf("type %q: %w", assetType, ErrInvalid)
	}
	if !manages {
		return fmt.Errorf("%s %s: %w", assetType, assetID, ErrNotAssetAdmin)
	}
	n, err := s.q.InsertBusinessAsset(ctx, coredb.InsertBusinessAssetParams{AssetType: assetType, AssetID: aid,
		BusinessID: bid, AddedBy: &uid})
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%s %s: %w", assetType, assetID, ErrAssetTaken)
	}
	return nil
}

// BusinessesOf maps each of the ids of assets of one type to the id of
// the business holding it; assets in no business are absent.
func (s *Businesses) BusinessesOf(ctx context.Context, assetType string, ids []string) (map[string]string, error) {
	nums := make([]int64, 0, len(ids))
	for _, id := range ids {
		if n, ok := ParseID(id); ok {
			nums = append(nums, n)
		}
	}
	out := map[string]string{}
	if len(nums) == 0 {
		return out, nil
	}
	rows, err := s.q.BusinessesOfAssets(ctx, coredb.BusinessesOfAssetsParams{AssetType: assetType, AssetIds: nums})
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[FormatID(r.AssetID)] = FormatID(r.BusinessID)
	}
	return out, nil
}

// AppVerified reports whether the app belongs to a verified business, which
// App Review asks before it takes the scopes CONTRACT §17 gates.
func (s *Businesses) AppVerified(ctx context.Context, appID string) (bool, error) {
	id, ok := ParseID(appID)
	if !ok {
		return false, nil
	}
	return s.q.AppBusinessVerified(ctx, id)
}

var (
	countryCode = regexp.MustCompile(`^[A-Z]{2}$`)
	sha256Hex   = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// RequestVerification records a verification request of the business by
// the user and makes it pending. The business must be unverified or
// rejected (ErrVerificationState otherwise).
func (s *Businesses) RequestVerification(ctx context.Context, businessID, userID string, req VerificationRequest) (Business, error) {
	bid, err := mustID("business", businessID)
	if err != nil {
		return Business{}, err
	}
	uid, err := mustID("user", userID)
	if err != nil {
		return Business{}, err
	}
	if err := req.check(); err != nil {
		return Business{}, err
	}
	docs, err := json.Marshal(req.Documents)
	if err != nil {
		return Business{}, err
	}
	var b Business
	err = s.InTx(ctx, func(s *Service) error {
		row, err := s.q.LockBusiness(ctx, bid)
		if err != nil {
			return notFound(err, "business "+businessID)
		}
		next, ok := NextVerificationStatus(VerificationStatus(row.VerificationStatus), RequestVerification)
		if !ok {
			return fmt.Errorf("business %s is %s: %w", businessID, row.VerificationStatus, ErrVerificationState)
		}
		if _, err := s.q.InsertBusinessVerification(ctx, coredb.InsertBusinessVerificationParams{BusinessID: bid,
			LegalName: req.LegalName, Country: req.Country, Documents: docs, RequestedBy: &uid}); err != nil {
			return err
		}
		if err := s.q.SetBusinessVerificationStatus(ctx, coredb.SetBusinessVerificationStatusParams{ID: bid, Status: string(next)}); err != nil {
			return err
		}
		b = Business{ID: businessID, Name: row.Name, VerificationStatus: next}
		return nil
	})
	return b, err
}

// check validates a request, naming the field at fault.
func (r VerificationRequest) check() error {
	if n := utf8.RuneCountInString(r.LegalName); n == 0 || n > 200 {
		return fmt.Errorf("legal_name: give 1 to 200 characters: %w", ErrInvalid)
	}
	if !countryCode.MatchString(r.Country) {
		return fmt.Errorf("country: give an ISO 3166-1 alpha-2 code such as \"FR\": %w", ErrInvalid)
	}
	if len(r.Documents) == 0 || len(r.Documents) > 10 {
		return fmt.Errorf("documents: give 1 to 10 documents: %w", ErrInvalid)
	}
	for _, d := range r.Documents {
		if n := utf8.RuneCountInString(d.Kind); n == 0 || n > 64 {
			return fmt.Errorf("documents: each kind has 1 to 64 characters: %w", ErrInvalid)
		}
		if !sha256Hex.MatchString(d.SHA256) {
			return fmt.Errorf("documents: each sha256 is 64 lowercase hexadecimal digits: %w", ErrInvalid)
		}
	}
	return nil
}

// VerificationQueue lists the requests waiting for staff, oldest first.
func (s *Businesses) VerificationQueue(ctx context.Context, limit int) ([]QueuedVerification, error) {
	rows, err := s.q.BusinessVerificationQueue(ctx, int32(limit))
	if err != nil {
		return nil, err
	}
	out := make([]QueuedVerification, 0, len(rows))
	for _, r := range rows {
		var docs []VerificationDocument
		if err := json.Unmarshal(r.Documents, &docs); err != nil {
			return nil, fmt.Errorf("documents of business %d: %w", r.BusinessID, err)
		}
		out = append(out, QueuedVerification{BusinessID: FormatID(r.BusinessID), BusinessName: r.Name,
			RequestedAt: r.RequestedAt.Time, VerificationRequest: VerificationRequest{LegalName: r.LegalName,
				Country: r.Country, Documents: docs}})
	}
	return out, nil
}

// DecideVerification is staff's decision on a pending business: approve
// or reject (a rejection needs a reason, which the business sees). A
// business that is not pending is ErrVerificationState.
func (s *Businesses) DecideVerification(ctx context.Context, staffID, businessID string, event VerificationEvent, reason string) (Business, error) {
	bid, err := mustID("business", businessID)
	if err != nil {
		return Business{}, err
	}
	sid, err := mustID("user", staffID)
	if err != nil {
		return Business{}, err
	}
	if event != ApproveVerification && event != RejectVerification {
		return Business{}, fmt.Errorf("decision %q: %w", event, ErrInvalid)
	}
	if event == RejectVerification && reason == "" {
		return Business{}, fmt.Errorf("reason: a rejection needs a reason: %w", ErrInvalid)
	}
	var b Business
	err = s.InTx(ctx, func(s *Service) error {
		row, err := s.q.LockBusiness(ctx, bid)
		if err != nil {
			return notFound(err, "business "+businessID)
		}
		next, ok := NextVerificationStatus(VerificationStatus(row.VerificationStatus), event)
		if !ok {
			return fmt.Errorf("business %s is %s: %w", businessID, row.VerificationStatus, ErrVerificationState)
		}
		open, err := s.q.OpenBusinessVerification(ctx, bid)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("business %s has no request: %w", businessID, ErrVerificationState)
		}
		if err != nil {
			return err
		}
		decision := string(event)
		if err := s.q.DecideBusinessVerification(ctx, coredb.DecideBusinessVerificationParams{ID: open,
			Decision: &decision, Reason: reason, DecidedBy: &sid}); err != nil {
			return err
		}
		if err := s.q.SetBusinessVerificationStatus(ctx, coredb.SetBusinessVerificationStatusParams{ID: bid,
			Status: string(next), Reason: reason}); err != nil {
			return err
		}
		b = Business{ID: businessID, Name: row.Name, VerificationStatus: next, VerificationReason: reason}
		return nil
	})
	return b, err
}
