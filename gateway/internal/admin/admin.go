package admin

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"regexp"
	"sort"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/host"
	"github.com/svcplatform/svc/gateway/internal/identity"
	adminv1 "github.com/svcplatform/svc/gen/svc/admin/v1"
	"github.com/svcplatform/svc/gen/svc/admin/v1/adminv1connect"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// Plugins is what the admin service needs of the plugin host.
type Plugins interface {
	Plugins() []host.Info
	Reload(ctx context.Context, name string) (host.Info, error)
}

// validName is a plugin's file name in the plugins folder.
var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// Users is what the admin service needs of the identity store.
type Users interface {
	SetStaff(ctx context.Context, userID string, staff bool) error
}

// Checkups is what the admin service needs of the identity store for the
// data use checkup (CONTRACT §17).
type Checkups interface {
	SetDataUseCheckupDue(ctx context.Context, appID string, due time.Time) (identity.Checkup, error)
	WakeCheckupReminders()
}

// Service implements AdminService.
type Service struct {
	adminv1connect.UnimplementedAdminServiceHandler
	plugins Plugins
	// routes lists a plugin's bound routes from the route table in use.
	routes func(plugin string) []string
	users  Users
	// forgetUser drops the user's cached principals (auth.Authenticator.ForgetUser).
	forgetUser func(userID string)
	checkups   Checkups
	// forgetApp drops the app's cached principals (auth.Authenticator.ForgetApp).
	forgetApp func(appID string)
}

// New returns the service.
func New(plugins Plugins, routes func(plugin string) []string) *Service {
	return &Service{plugins: plugins, routes: routes}
}

// WithUsers lets the service grant and revoke platform staff in users;
// forgetUser is called after each change, so that the user's cached
// principals carry it at once.
func (s *Service) WithUsers(users Users, forgetUser func(userID string)) *Service {
	s.users, s.forgetUser = users, forgetUser
	return s
}

// WithCheckups lets the operator set data use checkup due times in
// checkups; forgetApp is called after each change, so that the app's
// cached principals carry the new due time at once.
func (s *Service) WithCheckups(checkups Checkups, forgetApp func(appID string)) *Service {
	s.checkups, s.forgetApp = checkups, forgetApp
	return s
}

// SetDataUseCheckupDue sets when an app's data use checkup is due
// (CONTRACT §17). A past due time suspends a live app at once; the
// reminder loop is woken, so a due time within the window is reminded now.
func (s *Service) SetDataUseCheckupDue(ctx context.Context, req *connect.Request[adminv1.SetDataUseCheckupDueRequest]) (*connect.Response[adminv1.DataUseCheckupDue], error) {
	if err := requireAdmin(ctx); err != nil {
		return nil, err
	}
	if s.checkups == nil {
		return nil, apierr.Internal(errors.New("admin: no identity store"))
	}
	due, err := time.Parse(time.RFC3339, req.Msg.GetDueTime())
	if err != nil {
		return nil, apierr.Invalid("due_time", "Invalid parameter: due_time must be a time in RFC 3339, e.g. 2027-01-31T00:00:00Z.")
	}
	id := req.Msg.GetAppId()
	c, err := s.checkups.SetDataUseCheckupDue(ctx, id, due)
	if errors.Is(err, identity.ErrNotFound) {
		return nil, apierr.NotFound("App " + id)
	}
	if err != nil {
		return nil, apierr.Internal(err)
	}
	if s.forgetApp != nil {
		s.forgetApp(id)
	}
	s.checkups.WakeCheckupReminders()
	return connect.NewResponse(&adminv1.DataUseCheckupDue{AppId: id, Status: string(c.Status),
		DueTime: c.DueAt.UTC().Format(time.RFC3339)}), nil
}

// SetUserStaff grants or revokes platform staff (CONTRACT §16).
func (s *Service) SetUserStaff(ctx context.Context, req *connect.Request[adminv1.SetUserStaffRequest]) (*connect.Response[adminv1.UserStaff], error) {
	if err := requireAdmin(ctx); err != nil {
		return nil, err
	}
	if s.users == nil {
		return nil, apierr.Internal(errors.New("admin: no identity store"))
	}
	id := req.Msg.GetUserId()
	if req.Msg.Staff == nil {
		return nil, apierr.Invalid("staff", "The parameter staff is required: true grants platform staff, false revokes it.")
	}
	staff := req.Msg.GetStaff()
	if err := s.users.SetStaff(ctx, id, staff); err != nil {
		if errors.Is(err, identity.ErrNotFound) {
			return nil, apierr.NotFound("User " + id)
		}
		return nil, apierr.Internal(err)
	}
	if s.forgetUser != nil {
		s.forgetUser(id)
	}
	return connect.NewResponse(&adminv1.UserStaff{Id: id, Staff: staff}), nil
}

// ListPlugins lists every plugin with its state and routes.
func (s *Service) ListPlugins(ctx context.Context, _ *connect.Request[adminv1.ListPluginsRequest]) (*connect.Response[adminv1.ListPluginsResponse], error) {
	if err := requireAdmin(ctx); err != nil {
		return nil, err
	}
	infos := s.plugins.Plugins()
	sort.Slice(infos, func(i, j int) bool { return infos[i].Name < infos[j].Name })
	res := &adminv1.ListPluginsResponse{Plugins: make([]*adminv1.Plugin, 0, len(infos))}
	for _, in := range infos {
		res.Plugins = append(res.Plugins, s.toProto(in))
	}
	return connect.NewResponse(res), nil
}

// ReloadPlugin swaps in the binary now in the plugins folder. On failure the
// old process keeps serving and the error says why.
func (s *Service) ReloadPlugin(ctx context.Context, req *connect.Request[adminv1.ReloadPluginRequest]) (*connect.Response[adminv1.Plugin], error) {
	if err := requireAdmin(ctx); err != nil {
		return nil, err
	}
	name := req.Msg.GetName()
	if !validName.MatchString(name) {
		return nil, apierr.Invalid("name", "Invalid parameter: %q is not a plugin name.", name)
	}
	in, err := s.plugins.Reload(ctx, name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, apierr.NotFound("Plugin " + name)
		}
		e := apierr.Invalid("name", "The plugin %s was not reloaded; the running process keeps serving: %v", name, err)
		e.HTTPStatus = http.StatusConflict
		return nil, e
	}
	return connect.NewResponse(s.toProto(in)), nil
}

func (s *Service) toProto(in host.Info) *adminv1.Plugin {
	p := &adminv1.Plugin{
		Name: in.Name, Version: in.Version, Protocol: uint32(in.Protocol), Sha256: in.SHA256,
		Pid: int32(in.PID), State: string(in.State), Routes: s.routes(in.Name), Isolation: string(in.Isolation),
	}
	if !in.StartedAt.IsZero() {
		p.StartedAt = timestamppb.New(in.StartedAt)
	}
	if p.Routes == nil {
		p.Routes = []string{}
	}
	return p
}

// requireAdmin refuses every credential but the operator's admin token.
func requireAdmin(ctx context.Context) error {
	p, err := auth.Caller(ctx)
	if err != nil {
		return err // an unknown or expired token: 190/467, 190/463
	}
	if p == nil {
		return apierr.NoToken()
	}
	if p.Kind != pluginv1.TokenKind_TOKEN_KIND_ADMIN {
		return auth.AdminTokenRequired()
	}
	return nil
}
