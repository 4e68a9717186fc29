package coregraph

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/svcplatform/svc/gateway/internal/auth"
	corev1 "github.com/svcplatform/svc/gen/svc/core/v1"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
	"github.com/svcplatform/svc/sdk"
)

// Plugins is the call path as the gateway's own nodes use it (the
// gateway's dispatcher): what the plugins of the route table in use
// declare, and calls of their methods as a caller. The answers are read as
// JSON, so that the gateway depends on no plugin's types.
type Plugins interface {
	// Declaring lists the methods of the route table in use whose edge
	// options (svc/plugin/v1/edge.proto) f accepts, by procedure.
	Declaring(f func(*manifestcheck.Edge) bool) []*manifestcheck.Method
	// CallJSON calls procedure through the route table as caller, with the
	// caller's own access checks, request and answer in protojson; ok is
	// false when no plugin serves procedure.
	CallJSON(ctx context.Context, caller *auth.Principal, procedure string, req []byte) (res []byte, ok bool, err error)
}

// appWentLive tells the plugins that declare on_app_live that appID went
// live, as the caller who made it live (svcchat sends the templates the app
// approved itself to staff review, CONTRACT §15). The app is live whatever
// the answers: a plugin must not depend on being told (svcchat applies the
// same rule whenever it reads a live app's templates); a failure (the
// plugin restarting) is logged.
func (s *Service) appWentLive(ctx context.Context, caller *auth.Principal, appID string) {
	if s.plugins == nil {
		return
	}
	req, _ := json.Marshal(map[string]string{"app_id": appID})
	for _, m := range s.plugins.Declaring(func(e *manifestcheck.Edge) bool { return e.OnAppLive }) {
		if _, _, err := s.plugins.CallJSON(ctx, caller, m.Procedure, req); err != nil {
			slog.WarnContext(ctx, "a plugin was not told that the app went live", "app_id", appID, "procedure", m.Procedure, "error", err)
		}
	}
}

// pluginAssets lists the caller's assets that plugins keep (the ads
// plugin's ad accounts), from every method declaring assigned_assets, with
// the same access checks as the caller's own call of it: a caller a method
// refuses (a token without ads_read) has none of its assets, as Meta lists
// only the assets a token may see.
func (s *Service) pluginAssets(ctx context.Context, caller *auth.Principal) ([]*corev1.AssignedAsset, error) {
	if s.plugins == nil {
		return nil, nil
	}
	var assets []*corev1.AssignedAsset
	for _, m := range s.plugins.Declaring(func(e *manifestcheck.Edge) bool { return e.Assets != nil }) {
		more, err := assetList(ctx, s.plugins, caller, m)
		if err != nil {
			return nil, err
		}
		assets = append(assets, more...)
	}
	return assets, nil
}

// assetList calls one method declaring assigned_assets for caller.
func assetList(ctx context.Context, plugins Plugins, caller *auth.Principal, m *manifestcheck.Method) ([]*corev1.AssignedAsset, error) {
	js, ok, err := plugins.CallJSON(ctx, caller, m.Procedure, []byte(`{"limit":100}`))
	var refusal *sdk.Error
	if errors.As(err, &refusal) && (refusal.HTTPStatus == http.StatusUnauthorized || refusal.HTTPStatus == http.StatusForbidden) {
		return nil, nil
	}
	if err != nil || !ok {
		return nil, err
	}
	var list struct {
		Data []struct {
			ID         string `json:"id"`
			Name       string `json:"name"`
			BusinessID string `json:"business_id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(js, &list); err != nil {
		return nil, err
	}
	decl := m.Edge.Assets
	assets := make([]*corev1.AssignedAsset, 0, len(list.Data))
	for _, a := range list.Data {
		assets = append(assets, &corev1.AssignedAsset{Id: a.ID, Type: decl.GetType(), Name: a.Name,
			BusinessId: a.BusinessID, Tasks: nonNil(decl.GetTasks())})
	}
	return assets, nil
}
