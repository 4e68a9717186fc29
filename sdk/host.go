package sdk

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/pluginrt"
)

// ErrNoHost is returned by HostClient methods when the plugin runs without a
// gateway, e.g. in a test that gave it no host.
var ErrNoHost = pluginrt.ErrNoHost

// HostClient calls the gateway's Host service: another plugin's methods, and
// the core's identity data.
type HostClient pluginrt.HostClient

func (h *HostClient) rt() *pluginrt.HostClient { return (*pluginrt.HostClient)(h) }

// Call invokes procedure (e.g. "/svc.completions.v1.CompletionsService/Complete")
// on whichever plugin serves it, with req, and decodes the answer into res.
// A refusal by the other plugin is returned as its *Error, so a handler may
// return it as is.
func (h *HostClient) Call(ctx context.Context, procedure string, req, res proto.Message) error {
	refusal, err := h.rt().Call(ctx, procedure, req, res)
	if refusal != nil {
		return errorFromProto(refusal)
	}
	return hostError(err)
}

// PageQuery names a Page and the caller whose standing on it PageAccess
// reports: a user, an app, both or neither (the Page's own facts only).
type PageQuery struct {
	PageID string
	UserID string
	AppID  string
	// Need is the least role the action needs of the user (PageRoleLinked:
	// of the user, or of the app through its link). When set, the gateway
	// decides by its access rules, as for a method's declared page_role
	// (docs/design/auth.md, "Page roles"), and PageAccess returns its
	// refusal, an *Error to return as is (403, code 200, 2069003 for a role
	// too low; 404 for a Page that does not exist); errors.Is(err,
	// ErrPageRefused) tells it from a failure. PageRoleNone: facts only.
	Need PageRole
}

// PageRole is a least role a PageQuery needs on a Page.
type PageRole int32

// The least roles. They number as svc.plugin.v1.PageRole; what each passes
// is the gateway's to decide (docs/design/auth.md): a plugin names the one
// its action needs and never compares roles itself.
const (
	PageRoleNone   PageRole = 0
	PageRoleLinked PageRole = 1 // any role on the Page, or an app linked to it
	PageRoleAdmin  PageRole = 2 // owners and admins
	PageRoleOwner  PageRole = 3 // owners
	PageRoleEditor PageRole = 4 // any role on the Page: owner, admin or editor
)

// ErrPageRefused is the cause of the gateway's refusal of a PageQuery's
// Need, for a handler that hides what the caller may not reach (e.g. answers
// that a post does not exist) rather than returning the refusal.
var ErrPageRefused = errors.New("sdk: the gateway refused the Page role the query needs")

// PageAccess is what the gateway knows of a Page for a user and an app.
type PageAccess struct {
	// Exists is false when there is no such Page; the other fields are then
	// empty.
	Exists bool
	// Name is the Page's name, e.g. for an assistant's attribution.
	Name string
	// AppLinked is true when the queried app is linked to the Page, and
	// AppProducts then lists the products the link grants.
	AppLinked   bool
	AppProducts []string
	// Published and ChatSurfacing are the Page's visibility settings.
	Published     bool
	ChatSurfacing bool
	// InboxAutomation: the built-in assistant answers a conversation's
	// first message; AssistantLabel is how its replies are attributed after
	// the Page name.
	InboxAutomation bool
	AssistantLabel  string
	// InboxMergeLinked: the Page's threads may be merged into the chat
	// app's inbox.
	InboxMergeLinked bool
	// HandoverTimeout is the default expiry of svcchat's take and pass; 0:
	// none.
	HandoverTimeout time.Duration
}

// PageAccess asks the gateway about a Page, and, with q.Need, whether the
// user or app may act on it as the action needs.
func (h *HostClient) PageAccess(ctx context.Context, q PageQuery) (*PageAccess, error) {
	resp, err := h.rt().PageAccess(ctx, &pluginv1.PageAccessRequest{PageId: q.PageID, UserId: q.UserID, AppId: q.AppID,
		Need: pluginv1.PageRole(q.Need)})
	if err != nil {
		return nil, hostError(err)
	}
	if r := resp.GetRefusal(); r != nil {
		return nil, errorFromProto(r).WithCause(ErrPageRefused)
	}
	return pageAccessFromProto(resp), nil
}

// pageAccessFromProto is the one conversion of a Page's facts from the wire.
func pageAccessFromProto(resp *pluginv1.PageAccessResponse) *PageAccess {
	return &PageAccess{
		Exists: resp.GetPageExists(), Name: resp.GetPageName(),
		AppLinked: resp.GetAppLinked(), AppProducts: slices.Clone(resp.GetAppProducts()),
		Published: resp.GetPublished(), ChatSurfacing: resp.GetChatSurfacing(),
		InboxAutomation: resp.GetInboxAutomation(), AssistantLabel: resp.GetAssistantLabel(),
		InboxMergeLinked: resp.GetInboxMergeLinked(),
		HandoverTimeout:  time.Duration(resp.GetHandoverTimeout()) * time.Second,
	}
}

// BusinessRole is the least role an action needs on a business. They
// number as svc.plugin.v1.BusinessRole; what each passes is the gateway's
// to decide (docs/design/auth.md, "Business roles").
type BusinessRole int32

// The least roles on a business.
const (
	BusinessRoleEmployee BusinessRole = 1 // admins and employees
	BusinessRoleAdmin    BusinessRole = 2 // admins
)

// ErrBusinessRefused is the cause of the gateway's refusal in
// BusinessAccess, for a handler that hides what the caller may not reach
// (e.g. answers that a catalog does not exist) rather than returning it.
var ErrBusinessRefused = errors.New("sdk: the gateway refused the business role the action needs")

// BusinessQuery names a business, or an asset whose business the core
// records, a user, and the least role the user's action needs there.
type BusinessQuery struct {
	// BusinessID is the business; empty when the query names an asset.
	BusinessID string
	// AssetType and AssetID name an asset of a business (e.g.
	// "AD_ACCOUNT" and its id): the query is about the business that the
	// core records as holding it (business/<id>/assets). An asset in no
	// business is refused as not found.
	AssetType, AssetID string
	UserID             string
	Need               BusinessRole
}

// BusinessAccess asks the gateway whether q's user may act on q's business
// as an action needing q.Need may: nil when so, else the gateway's
// refusal, an *Error to return as is (403, code 200, 2069003 for no role
// or one too low; 404 for a business that does not exist or an asset in
// none), with errors.Is(err, ErrBusinessRefused) telling it from a
// failure. It is for objects the plugin keeps under a business the request
// does not name; a method whose request names the business declares
// business_role instead.
func (h *HostClient) BusinessAccess(ctx context.Context, q BusinessQuery) error {
	resp, err := h.rt().BusinessAccess(ctx, &pluginv1.BusinessAccessRequest{BusinessId: q.BusinessID, UserId: q.UserID,
		Need: pluginv1.BusinessRole(q.Need), AssetType: q.AssetType, AssetId: q.AssetID})
	if err != nil {
		return hostError(err)
	}
	if r := resp.GetRefusal(); r != nil {
		return errorFromProto(r).WithCause(ErrBusinessRefused)
	}
	return nil
}

// AppInfo is what the gateway knows of an app.
type AppInfo struct {
	// Exists is false when there is no such app; the other fields are then
	// empty.
	Exists bool
	Name   string
	// Live is true when the app is in live mode (false: development mode).
	Live bool
	// Products lists the products the app has enabled.
	Products []string
	// PlatformConfig is the app's platformConfig (the app/<id>/config
	// node) as JSON values; nil when unset.
	PlatformConfig map[string]any
}

// AppInfo asks the gateway about an app: its name, mode, products and
// platformConfig.
func (h *HostClient) AppInfo(ctx context.Context, appID string) (*AppInfo, error) {
	resp, err := h.rt().AppInfo(ctx, appID)
	if err != nil {
		return nil, hostError(err)
	}
	app := &AppInfo{Exists: resp.GetAppExists(), Name: resp.GetName(), Live: resp.GetLive(), Products: resp.GetProducts()}
	if c := resp.GetPlatformConfig(); c != nil {
		app.PlatformConfig = c.AsMap()
	}
	return app, nil
}

// UserInfo is what the gateway knows of a user.
type UserInfo struct {
	// Exists is false when there is no such user; Name is then empty.
	Exists bool
	// Name is the user's display name.
	Name string
}

// UserInfo asks the gateway whether a user exists and how the user is
// named.
func (h *HostClient) UserInfo(ctx context.Context, userID string) (*UserInfo, error) {
	resp, err := h.rt().UserInfo(ctx, userID)
	if err != nil {
		return nil, hostError(err)
	}
	return &UserInfo{Exists: resp.GetUserExists(), Name: resp.GetName()}, nil
}

// hostError keeps a gateway that is briefly unreachable retryable for the
// caller.
func hostError(err error) error {
	var he pluginrt.HostError
	if !errors.As(err, &he) {
		return err
	}
	switch he.Failure() {
	case pluginrt.HostUnavailable:
		return Unavailable("The gateway").WithCause(fmt.Errorf("host call %s: %w", he.What, he.Err))
	case pluginrt.HostDeadline:
		return fmt.Errorf("sdk: host call %s: %w", he.What, context.DeadlineExceeded)
	}
	return err
}
