package coregraph

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/webhook"
	corev1 "github.com/svcplatform/svc/gen/svc/core/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/sdk"
)

// Service implements svc.core.v1.GraphService.
type Service struct {
	id *identity.Service
	q  *coredb.Queries
	// now is the clock, replaceable in tests.
	now func() time.Time
	// forget drops revoked or expired credentials from the authenticator's
	// cache, so that they stop working at once on this gateway.
	forget func(hashes ...[]byte)
	// pageChanged drops what the authenticator remembers of a Page whose
	// settings or links changed, so that the next call sees the change.
	pageChanged func(pageID string)
	// appChanged drops the app's cached credentials after a change to what
	// they carry (its data use checkup certified).
	appChanged func(appID string)
	// userChanged drops the authenticator's cached credentials of a user
	// whose Page choice for an app changed.
	userChanged func(userID string)
	// plugins reaches what plugins declare (Options.Plugins); nil: none.
	plugins Plugins
	// deletions checks data deletion callback URLs and wakes their sender
	// (Options.Deletions).
	deletions Deletions
	// leavers erases the data of people who leave (Options.Leavers).
	leavers Leavers
	// authorizeBusiness is the business's access rule
	// (Options.AuthorizeBusiness).
	authorizeBusiness func(ctx context.Context, p *auth.Principal, least pluginv1.BusinessRole, businessID string) error
}

// Options are what the service is built from.
type Options struct {
	// Identity is the identity store the nodes read and write.
	Identity *identity.Service
	// Forget is told the hashes of credentials the service revokes or
	// expires (auth.Authenticator.Forget); nil: none.
	Forget func(hashes ...[]byte)
	// PageChanged is told the id of a Page whose settings or links the
	// service changes (auth.Authenticator.ForgetPage); nil: none.
	PageChanged func(pageID string)
	// AppChanged is told the id of an app whose credentials' principals
	// the service changes (auth.Authenticator.ForgetApp); nil: none.
	AppChanged func(appID string)
	// UserChanged is told the id of a user whose Page choice for an app the
	// service changes (auth.Authenticator.ForgetUser); nil: none.
	UserChanged func(userID string)
	// Plugins lets the service reach what plugins declare: the assets they
	// add to me/assigned_assets and their part in an app going live; nil:
	// no plugin is called.
	Plugins Plugins
	// Deletions checks an app's data_deletion_callback_url with the
	// webhooks' address rules and wakes the sender of the callbacks
	// (*webhook.Service); nil: no URL is accepted.
	Deletions Deletions
	// Leavers names the plugins that erase the data of a person who
	// leaves and wakes the runner of their jobs; nil: no plugin is told.
	Leavers Leavers
	// AuthorizeBusiness is the business's access rule
	// (auth.Authenticator.AuthorizeBusiness), for the partner nodes, which
	// name a business only through the partner; nil: every caller is
	// refused as having no role.
	AuthorizeBusiness func(ctx context.Context, p *auth.Principal, least pluginv1.BusinessRole, businessID string) error
}

// Leavers is what leaving needs of the runner of the plugins' user-left
// jobs.
type Leavers interface {
	// UserLeftPlugins names the user-left jobs to write: the core's own and
	// one per plugin declaring the hook.
	UserLeftPlugins() []string
	// WakeUserLeft runs the jobs at once rather than at the next poll.
	WakeUserLeft()
}

// Deletions is what the data deletion callbacks need of the webhook
// engine, which sends them.
type Deletions interface {
	CheckDeletionCallbackURL(ctx context.Context, raw string, dev bool) error
	WakeDeletions()
}

// New returns the service.
func New(o Options) *Service {
	s := &Service{id: o.Identity, q: o.Identity.Queries(), now: time.Now,
		forget: o.Forget, pageChanged: o.PageChanged, appChanged: o.AppChanged, userChanged: o.UserChanged, plugins: o.Plugins, deletions: o.Deletions, leavers: o.Leavers,
		authorizeBusiness: o.AuthorizeBusiness}
	if s.authorizeBusiness == nil {
		s.authorizeBusiness = func(context.Context, *auth.Principal, pluginv1.BusinessRole, string) error {
			return auth.NotBusinessMember("The user must have a role on the business.")
		}
	}
	if s.forget == nil {
		s.forget = func(...[]byte) {}
	}
	if s.pageChanged == nil {
		s.pageChanged = func(string) {}
	}
	if s.appChanged == nil {
		s.appChanged = func(string) {}
	}
	if s.userChanged == nil {
		s.userChanged = func(string) {}
	}
	return s
}

// Register adds the service's methods to p.
func (s *Service) Register(p *sdk.Plugin) {
	m := corev1.File_svc_core_v1_graph_proto.Services().ByName("GraphService").Methods()
	sdk.Handle(p, m.ByName("GetMe"), s.getMe)
	sdk.Handle(p, m.ByName("ListMyPages"), s.listMyPages)
	sdk.Handle(p, m.ByName("ListMyBusinessPortfolios"), s.listMyBusinessPortfolios)
	sdk.Handle(p, m.ByName("ListMyApps"), s.listMyApps)
	sdk.Handle(p, m.ByName("ListMyAssignedAssets"), s.listMyAssignedAssets)
	sdk.Handle(p, m.ByName("CreateApp"), s.createApp)
	sdk.Handle(p, m.ByName("CreatePage"), s.createPage)
	sdk.Handle(p, m.ByName("GetPage"), s.getPage)
	sdk.Handle(p, m.ByName("UpdatePageSettings"), s.updatePageSettings)
	sdk.Handle(p, m.ByName("ListPageRoles"), s.listPageRoles)
	sdk.Handle(p, m.ByName("SetPageRole"), s.setPageRole)
	sdk.Handle(p, m.ByName("DeletePageRole"), s.deletePageRole)
	sdk.Handle(p, m.ByName("ListConnectedAssets"), s.listConnectedAssets)
	sdk.Handle(p, m.ByName("DebugToken"), s.debugToken)
	sdk.Handle(p, m.ByName("GetApp"), s.getApp)
	sdk.Handle(p, m.ByName("UpdateApp"), s.updateApp)
	sdk.Handle(p, m.ByName("GetAppConfig"), s.getAppConfig)
	sdk.Handle(p, m.ByName("UpdateAppConfig"), s.updateAppConfig)
	sdk.Handle(p, m.ByName("ListPageLinks"), s.listPageLinks)
	sdk.Handle(p, m.ByName("CreatePageLink"), s.createPageLink)
	sdk.Handle(p, m.ByName("DeletePageLink"), s.deletePageLink)
	s.registerLifecycle(p)
	s.registerCheckup(p)
	s.registerDataRights(p)
	s.registerBusinesses(p)
	s.registerPartners(p)
}

func (s *Service) getMe(ctx context.Context, call *sdk.Call, _ *corev1.GetMeRequest) (*corev1.User, error) {
	me, err := s.id.Users.Me(ctx, call.Principal().UserID)
	if err != nil {
		return nil, s.mapErr(err, "User")
	}
	return &corev1.User{Id: me.ID, Name: me.Name}, nil
}

func (s *Service) listMyPages(ctx context.Context, call *sdk.Call, req *corev1.ListMyPagesRequest) (*corev1.ListMyPagesResponse, error) {
	w, err := sdk.ParseForwardWindow(req.GetLimit(), req.GetAfter(), req.GetBefore())
	if err != nil {
		return nil, err
	}
	// A user token lists only the Pages the person chose for its app
	// (granular consent); a session has no app and lists every Page.
	pages, err := s.id.Pages.ManagedPagesFor(ctx, call.Principal().UserID, call.Principal().AppID, cursorID(w.After), int(w.Fetch()))
	if err != nil {
		return nil, s.mapErr(err, "User")
	}
	pages, paging := sdk.Page(w, pages, func(p identity.ManagedPage) int64 { return idKey(p.ID) })
	res := &corev1.ListMyPagesResponse{}
	paging.Set(res)
	for _, p := range pages {
		res.Data = append(res.Data, pageProto(p.Page, string(p.Role)))
	}
	return res, nil
}

// listMyApps lists the apps on the caller's teams with the caller's role.
func (s *Service) listMyApps(ctx context.Context, call *sdk.Call, req *corev1.ListMyAppsRequest) (*corev1.ListMyAppsResponse, error) {
	w, err := sdk.ParseForwardWindow(req.GetLimit(), req.GetAfter(), req.GetBefore())
	if err != nil {
		return nil, err
	}
	apps, err := s.id.Apps.AppsOfUser(ctx, call.Principal().UserID, cursorID(w.After), int(w.Fetch()))
	if err != nil {
		return nil, s.mapErr(err, "User")
	}
	apps, paging := sdk.Page(w, apps, func(a identity.MyApp) int64 { return idKey(a.ID) })
	res := &corev1.ListMyAppsResponse{}
	paging.Set(res)
	for _, a := range apps {
		res.Data = append(res.Data, &corev1.MyApp{Id: a.ID, Name: a.Name, Mode: string(a.Mode), Role: string(a.Role), ClientId: a.ClientID})
	}
	return res, nil
}

// assetTasks maps an asset's type and the user's role on it to the tasks
// the role allows, as Meta's assigned_assets names them. A Page's owner
// and admins may do everything on it; an editor all but MANAGE (settings,
// roles, links).
var assetTasks = map[[2]string][]string{
	{"PAGE", "owner"}:    {"MANAGE", "CREATE_CONTENT", "MODERATE", "ADVERTISE", "ANALYZE"},
	{"PAGE", "admin"}:    {"MANAGE", "CREATE_CONTENT", "MODERATE", "ADVERTISE", "ANALYZE"},
	{"PAGE", "editor"}:   {"CREATE_CONTENT", "MODERATE", "ADVERTISE", "ANALYZE"},
	{"APP", "admin"}:     {"MANAGE", "DEVELOP", "TEST"},
	{"APP", "developer"}: {"DEVELOP", "TEST"},
	{"APP", "tester"}:    {"TEST"},
}

// listMyAssignedAssets lists the Pages and apps the user has a role on,
// then the assets plugins keep for the caller (pluginAssets), each with
// the business the core records as holding it. A user token lists only the
// Pages the person chose for its app (granular consent), as me/accounts.
func (s *Service) listMyAssignedAssets(ctx context.Context, call *sdk.Call, _ *corev1.ListMyAssignedAssetsRequest) (*corev1.ListMyAssignedAssetsResponse, error) {
	uid, ok := identity.ParseID(call.Principal().UserID)
	if !ok {
		return nil, sdk.NotFound("User " + call.Principal().UserID)
	}
	rows, err := s.q.AssignedAssets(ctx, uid)
	if err != nil {
		return nil, err
	}
	res := &corev1.ListMyAssignedAssetsResponse{Data: make([]*corev1.AssignedAsset, 0, len(rows))}
	chosen := pageChoice(ctx)
	for _, r := range rows {
		if r.Type == "PAGE" && !chosen.Allows(identity.FormatID(r.ID)) {
			continue
		}
		a := &corev1.AssignedAsset{Id: identity.FormatID(r.ID), Type: r.Type, Name: r.Name,
			Tasks: nonNil(assetTasks[[2]string{r.Type, r.Role}])}
		if r.BusinessID != 0 {
			a.BusinessId = identity.FormatID(r.BusinessID)
		}
		res.Data = append(res.Data, a)
	}
	more, err := s.pluginAssets(ctx, auth.FromContext(ctx))
	if err != nil {
		return nil, err
	}
	if err := s.setAssetBusinesses(ctx, more); err != nil {
		return nil, err
	}
	res.Data = append(res.Data, more...)
	return res, nil
}

// pageChoice is the Pages the caller's user token reaches (granular
// consent); nil, every Page, for a session or a token with no choice.
func pageChoice(ctx context.Context) *auth.PageChoice {
	if p := auth.FromContext(ctx); p != nil {
		return p.Pages
	}
	return nil
}

func (s *Service) createApp(ctx context.Context, call *sdk.Call, req *corev1.CreateAppRequest) (*corev1.CreatedApp, error) {
	for _, u := range req.GetRedirectUris() {
		if err := identity.ValidRedirectURI(u); err != nil {
			return nil, sdk.Invalid("redirect_uris", "Invalid parameter: redirect_uris: %v", err)
		}
	}
	app, err := s.id.Apps.CreateApp(ctx, identity.NewApp{Name: req.GetName(), AdminID: call.Principal().UserID,
		RedirectURIs: req.GetRedirectUris(), Products: req.GetProducts()})
	if err != nil {
		return nil, s.mapErr(err, "User")
	}
	key, err := s.id.Apps.CreateAppKey(ctx, app.ID)
	if err != nil {
		return nil, err
	}
	return &corev1.CreatedApp{Id: app.ID, Name: app.Name, Mode: string(app.Mode), ClientId: app.ClientID,
		ClientSecret: app.ClientSecret, WebhookSecret: webhook.StandardKey(app.ClientSecret), ApiKey: key, RedirectUris: nonNil(req.GetRedirectUris()), Products: nonNil(req.GetProducts())}, nil
}

// createPage makes a Page whose owner is the caller (CONTRACT §16).
func (s *Service) createPage(ctx context.Context, call *sdk.Call, req *corev1.CreatePageRequest) (*corev1.CreatedPage, error) {
	page, err := s.id.Pages.CreatePage(ctx, identity.NewPage{Name: req.GetName(), Category: req.GetCategory(),
		OwnerID: call.Principal().UserID})
	if err != nil {
		return nil, s.mapErr(err, "User")
	}
	// A call on the new id before it existed may have been remembered as
	// "no such Page".
	s.pageChanged(page.ID)
	return &corev1.CreatedPage{Id: page.ID}, nil
}

func (s *Service) getPage(ctx context.Context, call *sdk.Call, req *corev1.GetPageRequest) (*corev1.Page, error) {
	p, err := s.id.Pages.Page(ctx, req.GetPageId())
	if err != nil {
		return nil, s.mapErr(err, "Page "+req.GetPageId())
	}
	facts, err := s.id.Pages.PageFacts(ctx, req.GetPageId(), call.Principal().UserID, "")
	if err != nil {
		return nil, err
	}
	return pageProto(p, roleName(facts.UserRole)), nil
}

func (s *Service) updatePageSettings(ctx context.Context, _ *sdk.Call, req *corev1.UpdatePageSettingsRequest) (*corev1.SuccessResponse, error) {
	if req.Published == nil && req.InboxMergeLinked == nil && req.ChatSurfacing == nil && req.InboxAutomation == nil &&
		req.AssistantLabel == nil && req.HandoverTimeout == nil {
		return nil, sdk.Invalid("chat_surfacing", "Invalid parameter: give at least one of published, chat_surfacing, inbox_merge_linked, inbox_automation, assistant_label, handover_timeout.")
	}
	if t := req.HandoverTimeout; t != nil && *t != 0 && (*t < 60 || *t > 86400) {
		return nil, sdk.Invalid("handover_timeout", "Invalid parameter: handover_timeout must be from 60 to 86400 seconds, or 0 for none.")
	}
	err := s.id.Pages.UpdateSettings(ctx, req.GetPageId(), identity.PageSettings{Published: req.Published,
		ChatSurfacing: req.ChatSurfacing, InboxMergeLinked: req.InboxMergeLinked, InboxAutomation: req.InboxAutomation,
		AssistantLabel: req.AssistantLabel, HandoverTimeout: req.HandoverTimeout})
	if err != nil {
		return nil, s.mapErr(err, "Page "+req.GetPageId())
	}
	s.pageChanged(req.GetPageId())
	return &corev1.SuccessResponse{Success: true}, nil
}

// listPageRoles lists the Page's people; the gateway has checked that the
// caller is one of them.
func (s *Service) listPageRoles(ctx context.Context, _ *sdk.Call, req *corev1.ListPageRolesRequest) (*corev1.ListPageRolesResponse, error) {
	people, err := s.id.Pages.PageRoles(ctx, req.GetPageId())
	if err != nil {
		return nil, s.mapErr(err, "Page "+req.GetPageId())
	}
	res := &corev1.ListPageRolesResponse{Data: make([]*corev1.PageRoleEntry, 0, len(people))}
	for _, p := range people {
		res.Data = append(res.Data, &corev1.PageRoleEntry{UserId: p.UserID, Name: p.Name, Role: string(p.Role)})
	}
	return res, nil
}

// setPageRole grants or changes a role. The gateway has checked that the
// caller owns or administers the Page; who may grant what to whom is
// identity.PageRoleChange, applied on the stored roles under the Page's
// lock.
func (s *Service) setPageRole(ctx context.Context, call *sdk.Call, req *corev1.SetPageRoleRequest) (*corev1.SuccessResponse, error) {
	err := s.id.Pages.SetPageRole(ctx, call.Principal().UserID, req.GetPageId(), req.GetUserId(), identity.PageRole(req.GetRole()))
	if err != nil {
		return nil, s.pageRoleErr(err, "role", req.GetUserId())
	}
	s.pageChanged(req.GetPageId())
	return &corev1.SuccessResponse{Success: true}, nil
}

// deletePageRole takes a role away, or lets the caller leave the Page.
func (s *Service) deletePageRole(ctx context.Context, call *sdk.Call, req *corev1.DeletePageRoleRequest) (*corev1.SuccessResponse, error) {
	err := s.id.Pages.RemovePageRole(ctx, call.Principal().UserID, req.GetPageId(), req.GetUserId())
	if err != nil {
		return nil, s.pageRoleErr(err, "user_id", req.GetUserId())
	}
	s.pageChanged(req.GetPageId())
	return &corev1.SuccessResponse{Success: true}, nil
}

// pageRoleErr answers a refused role change: the last owner (400 naming
// field), a change the caller's role does not allow (2069003), or the user
// or role that does not exist.
func (s *Service) pageRoleErr(err error, field, userID string) error {
	switch {
	case errors.Is(err, identity.ErrLastOwner):
		return sdk.Invalid(field, "Invalid parameter: %s: user %s is the Page's last owner; make another person owner first.", field, userID)
	case errors.Is(err, identity.ErrPageRole):
		return apierr.PageRoleTooLow("Only an owner of the Page can grant owner, or change or remove an owner's role; an editor can only leave the Page.")
	case errors.Is(err, identity.ErrNotFound) && field == "role":
		return sdk.NotFound("User " + userID) // the Page exists: the gateway checked the caller's role on it
	case errors.Is(err, identity.ErrNotFound):
		return sdk.NotFound("Page role of user " + userID)
	}
	return s.mapErr(err, "Page")
}

func (s *Service) listConnectedAssets(ctx context.Context, _ *sdk.Call, req *corev1.ListConnectedAssetsRequest) (*corev1.ListConnectedAssetsResponse, error) {
	pid, ok := identity.ParseID(req.GetPageId())
	if !ok {
		return nil, sdk.NotFound("Page " + req.GetPageId())
	}
	w, err := sdk.ParseWindow(req.GetLimit(), req.GetAfter(), "")
	if err != nil {
		return nil, err
	}
	rows, err := s.q.ListConnectedApps(ctx, coredb.ListConnectedAppsParams{PageID: pid, AfterID: w.After, MaxRows: w.Fetch()})
	if err != nil {
		return nil, err
	}
	rows, paging := sdk.Page(w, rows, func(r coredb.ListConnectedAppsRow) int64 { return r.ID })
	res := &corev1.ListConnectedAssetsResponse{}
	paging.Set(res)
	for _, r := range rows {
		id := identity.FormatID(r.ID)
		res.Data = append(res.Data, &corev1.ConnectedAsset{Id: id, Type: "APP", AppId: id, Name: r.Name, Products: nonNil(r.Products)})
	}
	return res, nil
}

func (s *Service) debugToken(ctx context.Context, call *sdk.Call, req *corev1.DebugTokenRequest) (*corev1.DebugTokenResponse, error) {
	d, err := s.id.Sessions.DebugToken(ctx, call.Principal().AppID, req.GetInputToken(), s.now())
	if err != nil {
		return nil, s.mapErr(err, "Token")
	}
	out := &corev1.DebugTokenData{AppId: d.AppID, Type: d.Type, Application: d.Application, IsValid: d.IsValid,
		Scopes: nonNil(d.Scopes), UserId: d.UserID}
	for _, g := range d.GranularScopes {
		out.GranularScopes = append(out.GranularScopes, &corev1.GranularScope{Scope: g.Scope, TargetIds: nonNil(g.TargetIDs)})
	}
	if d.ExpiresAt != nil {
		out.ExpiresAt = ptr(d.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if d.IssuedAt != nil {
		out.IssuedAt = ptr(d.IssuedAt.UTC().Format(time.RFC3339))
	}
	return &corev1.DebugTokenResponse{Data: out}, nil
}

func (s *Service) getApp(ctx context.Context, call *sdk.Call, req *corev1.GetAppRequest) (*corev1.App, error) {
	app, err := s.app(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	products, err := s.id.Apps.AppProducts(ctx, app.ID)
	if err != nil {
		return nil, err
	}
	scopes, err := s.id.Apps.GrantableScopes(ctx, app)
	if err != nil {
		return nil, err
	}
	return &corev1.App{Id: app.ID, Name: app.Name, Mode: string(app.Mode), Products: nonNil(products), Scopes: nonNil(scopes)}, nil
}

func (s *Service) updateApp(ctx context.Context, call *sdk.Call, req *corev1.UpdateAppRequest) (*corev1.WentLive, error) {
	app, err := s.app(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	if req.DataDeletionCallbackUrl != nil {
		if err := s.setDeletionCallback(ctx, app, req.GetDataDeletionCallbackUrl()); err != nil {
			return nil, err
		}
		if req.GetMode() == "" {
			return &corev1.WentLive{Success: true, Mode: string(app.Mode)}, nil
		}
	}
	if req.GetMode() == "" {
		return nil, sdk.Invalid("mode", "Invalid parameter: mode: must be in list [live]")
	}
	live, err := s.id.Review.GoLive(ctx, app.ID)
	if errors.Is(err, identity.ErrReviewRequired) || errors.Is(err, identity.ErrInvalid) {
		return nil, sdk.Invalid("mode", "Invalid parameter: mode: %s.", trimSentinel(err))
	}
	if err != nil {
		return nil, s.mapErr(err, "App "+app.ID)
	}
	s.forget(live.RevokedKeys...)
	s.appWentLive(ctx, auth.FromContext(ctx), app.ID)
	return &corev1.WentLive{Success: true, Mode: string(identity.ModeLive), ApiKey: live.APIKey}, nil
}

func (s *Service) getAppConfig(ctx context.Context, call *sdk.Call, req *corev1.GetAppConfigRequest) (*corev1.AppConfig, error) {
	app, err := s.app(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	id, _ := identity.ParseID(app.ID)
	raw, err := s.q.GetAppConfig(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		raw = []byte("{}")
	} else if err != nil {
		return nil, err
	}
	cfg := &structpb.Struct{}
	if err := cfg.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	return &corev1.AppConfig{PlatformConfig: cfg}, nil
}

// maxConfigBytes bounds an app's platformConfig.
const maxConfigBytes = 256 << 10

func (s *Service) updateAppConfig(ctx context.Context, call *sdk.Call, req *corev1.UpdateAppConfigRequest) (*corev1.SuccessResponse, error) {
	app, err := s.app(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(req.GetPlatformConfig().AsMap())
	if err != nil {
		return nil, sdk.Invalid("platformConfig", "Invalid parameter: platformConfig must be a JSON object.")
	}
	if len(raw) > maxConfigBytes {
		return nil, sdk.Invalid("platformConfig", "Invalid parameter: platformConfig is larger than %d bytes.", maxConfigBytes)
	}
	id, _ := identity.ParseID(app.ID)
	if err := s.q.PutAppConfig(ctx, coredb.PutAppConfigParams{AppID: id, PlatformConfig: raw}); err != nil {
		return nil, err
	}
	return &corev1.SuccessResponse{Success: true}, nil
}

func (s *Service) listPageLinks(ctx context.Context, call *sdk.Call, req *corev1.ListPageLinksRequest) (*corev1.ListPageLinksResponse, error) {
	app, err := s.app(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	w, err := sdk.ParseWindow(req.GetLimit(), req.GetAfter(), "")
	if err != nil {
		return nil, err
	}
	aid, _ := identity.ParseID(app.ID)
	rows, err := s.q.ListAppPageLinks(ctx, coredb.ListAppPageLinksParams{AppID: aid, AfterID: w.After, MaxRows: w.Fetch()})
	if err != nil {
		return nil, err
	}
	rows, paging := sdk.Page(w, rows, func(r coredb.ListAppPageLinksRow) int64 { return r.ID })
	res := &corev1.ListPageLinksResponse{}
	paging.Set(res)
	for _, r := range rows {
		res.Data = append(res.Data, &corev1.PageLink{PageId: identity.FormatID(r.ID), PageName: r.Name, Products: nonNil(r.Products)})
	}
	return res, nil
}

// createPageLink links a Page to an app. The gateway has checked that the
// caller administers the Page; the app must exist.
func (s *Service) createPageLink(ctx context.Context, _ *sdk.Call, req *corev1.CreatePageLinkRequest) (*corev1.SuccessResponse, error) {
	if _, err := s.id.Apps.App(ctx, req.GetAppId()); err != nil {
		return nil, s.mapErr(err, "App "+req.GetAppId())
	}
	if err := s.id.Apps.LinkPage(ctx, req.GetAppId(), req.GetPageId(), req.GetProducts()); err != nil {
		return nil, s.mapErr(err, "Page "+req.GetPageId())
	}
	s.pageChanged(req.GetPageId())
	return &corev1.SuccessResponse{Success: true}, nil
}

func (s *Service) deletePageLink(ctx context.Context, _ *sdk.Call, req *corev1.DeletePageLinkRequest) (*corev1.SuccessResponse, error) {
	if err := s.id.Apps.UnlinkPage(ctx, req.GetAppId(), req.GetPageId()); err != nil {
		return nil, s.mapErr(err, "Page link")
	}
	s.pageChanged(req.GetPageId())
	return &corev1.SuccessResponse{Success: true}, nil
}

// app loads the app a node names. Who may act on it (CONTRACT §4) was
// decided by the gateway from the method's app_role before the call got
// here.
func (s *Service) app(ctx context.Context, appID string) (identity.App, error) {
	app, err := s.id.Apps.App(ctx, appID)
	if err != nil {
		return identity.App{}, s.mapErr(err, "App "+appID)
	}
	return app, nil
}

func (s *Service) mapErr(err error, what string) error {
	switch {
	case errors.Is(err, identity.ErrNotFound):
		return sdk.NotFound(what)
	case errors.Is(err, identity.ErrInvalid):
		return sdk.Invalid("", "Invalid parameter: %v", trimSentinel(err))
	case errors.Is(err, identity.ErrNotStaff):
		return auth.StaffRequired()
	case errors.Is(err, identity.ErrLimitReached):
		return sdk.Invalid("", "Limit reached: %s.", trimSentinel(err))
	case errors.Is(err, identity.ErrTestUser):
		return auth.NotOnTeam("A Test User cannot create apps.")
	}
	var busy *identity.ThrottledError
	if errors.As(err, &busy) {
		// Every password-hashing slot stayed busy (a new account's password).
		return auth.SignInThrottled(busy)
	}
	return err
}

func pageProto(p identity.Page, role string) *corev1.Page {
	out := &corev1.Page{Id: p.ID, Name: p.Name, Category: p.Category, Published: p.Published, Role: role,
		ChatSurfacing: p.ChatSurfacing, InboxMergeLinked: p.InboxMergeLinked, InboxAutomation: p.InboxAutomation,
		AssistantLabel: p.AssistantLabel}
	if p.HandoverTimeout > 0 {
		out.HandoverTimeout = &p.HandoverTimeout
	}
	return out
}

func roleName(r pluginv1.PageRole) string {
	switch r {
	case pluginv1.PageRole_PAGE_ROLE_OWNER:
		return "owner"
	case pluginv1.PageRole_PAGE_ROLE_ADMIN:
		return "admin"
	case pluginv1.PageRole_PAGE_ROLE_EDITOR:
		return "editor"
	}
	return ""
}

// Cursors of the core's lists are sdk cursors of the rows' ids, which are
// decimal (identity.FormatID).

// cursorID is the id an after cursor stands for; "" when there is none.
func cursorID(key int64) string {
	if key == 0 {
		return ""
	}
	return identity.FormatID(key)
}

// idKey is the cursor key of an id the core wrote.
func idKey(id string) int64 {
	key, _ := identity.ParseID(id)
	return key
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}

func ptr[T any](v T) *T { return &v }
