package plugintest

import (
	"context"
	"slices"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// OnePage is a Host service for tests of a plugin that asks the gateway
// about a Page (sdk.HostClient.PageAccess): it answers as the gateway would
// for one published Page, PageID, on which the users in Admins have the
// admin role and to which the apps in LinkedApps are linked; any other Page
// does not exist. Its other methods are unimplemented. Pass it to Start
// with WithHost.
type OnePage struct {
	pluginv1.UnimplementedHostServer
	PageID     string
	Admins     []string
	LinkedApps []string
}

// PageAccess answers the caller's standing on the Page.
func (h OnePage) PageAccess(_ context.Context, req *pluginv1.PageAccessRequest) (*pluginv1.PageAccessResponse, error) {
	res := &pluginv1.PageAccessResponse{PageExists: req.GetPageId() == h.PageID}
	if !res.PageExists {
		return res, nil
	}
	res.Published = true
	if slices.Contains(h.Admins, req.GetUserId()) {
		res.UserRole = pluginv1.PageRole_PAGE_ROLE_ADMIN
	}
	res.AppLinked = slices.Contains(h.LinkedApps, req.GetAppId())
	return res, nil
}
