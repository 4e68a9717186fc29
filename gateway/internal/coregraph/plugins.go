package coregraph

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/svcplatform/svc/gateway/internal/auth"
	corev1 "github.com/svcplatform/svc/gen/svc/core/v1"
	"github.com/svcplatform/svc/sdk"
)

// Plugins calls plugins' methods (dispatch.Dispatcher).
type Plugins interface {
	// CallJSON calls procedure through the route table as caller, with the
	// caller's own access checks, request and answer in protojson; ok is
	// false when no plugin serves procedure.
	CallJSON(ctx context.Context, caller *auth.Principal, procedure string, req []byte) (res []byte, ok bool, err error)
}

// WithPlugins lets the gateway's own services reach what plugins keep:
// me/assigned_assets lists, beside the Pages and apps, the ads plugin's ad
// accounts of the caller, and an app going live is told to svcchat
// (appWentLive).
func (s *Service) WithPlugins(plugins Plugins) *Service {
	s.plugins = plugins
	return s
}

// appWentLiveProcedure tells svcchat that an app went live.
const appWentLiveProcedure = "/svc.svcchat.v1.SvcchatService/AppWentLive"

// appWentLive tells svcchat that appID went live, as the caller who made
// it live, so that the templates the app approved itself go to staff
// review now and show in the staff queue (CONTRACT §15). The app is live
// whatever the answer: svcchat applies the same rule whenever it reads a
// live app's templates, so a send never depends on this call; a failure
// (the plugin restarting, or absent) is logged, and the templates reach the
// queue at svcchat's next look at the app.
func (s *Service) appWentLive(ctx context.Context, caller *auth.Principal, appID string) {
	if s.plugins == nil {
		return
	}
	req, _ := json.Marshal(map[string]string{"app_id": appID})
	if _, _, err := s.plugins.CallJSON(ctx, caller, appWentLiveProcedure, req); err != nil {
		slog.WarnContext(ctx, "svcchat was not told that the app went live", "app_id", appID, "error", err)
	}
}

// adAccountsProcedure lists the caller's ad accounts, in the ads plugin.
const adAccountsProcedure = "/svc.ads.v1.AdsService/ListMyAdAccounts"

// adAccountTasks are what a business's owner may do on its ad accounts, as
// Meta's assigned_assets names them.
var adAccountTasks = []string{"MANAGE", "ADVERTISE", "ANALYZE"}

// adAccounts lists the caller's ad accounts as assigned assets, with the
// same access checks as the caller's own call of me/adaccounts: a token
// that may not read them (no ads_read) lists none, as Meta lists only the
// assets a token may see, and so does a gateway without the ads plugin.
// The answer is read as JSON, so the gateway does not depend on the
// plugin's types.
func adAccounts(ctx context.Context, plugins Plugins, caller *auth.Principal) ([]*corev1.AssignedAsset, error) {
	js, ok, err := plugins.CallJSON(ctx, caller, adAccountsProcedure, []byte(`{"limit":100}`))
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
	assets := make([]*corev1.AssignedAsset, 0, len(list.Data))
	for _, a := range list.Data {
		assets = append(assets, &corev1.AssignedAsset{Id: a.ID, Type: "AD_ACCOUNT", Name: a.Name,
			BusinessId: a.BusinessID, Tasks: adAccountTasks})
	}
	return assets, nil
}
