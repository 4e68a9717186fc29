package version

import (
	"context"

	"connectrpc.com/connect"

	platformv1 "github.com/svcplatform/svc/gen/svc/platform/v1"
	"github.com/svcplatform/svc/gen/svc/platform/v1/platformv1connect"
)

// Service serves svc.platform.v1.PlatformService.
type Service struct {
	platformv1connect.UnimplementedPlatformServiceHandler
}

// GetChangelog returns the change history.
func (Service) GetChangelog(context.Context, *connect.Request[platformv1.GetChangelogRequest]) (*connect.Response[platformv1.GetChangelogResponse], error) {
	return connect.NewResponse(ChangelogProto()), nil
}
