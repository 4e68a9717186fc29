package coregraph

import (
	"context"
	"errors"
	"time"

	"github.com/svcplatform/svc/gateway/internal/identity"
	corev1 "github.com/svcplatform/svc/gen/svc/core/v1"
	"github.com/svcplatform/svc/sdk"
)

// The data use checkup nodes (CONTRACT §17). Who may call each was decided
// by the gateway from the method's access option: the team and the app
// read it; a team Admin's session certifies.

func (s *Service) registerCheckup(p *sdk.Plugin) {
	m := corev1.File_svc_core_v1_graph_proto.Services().ByName("GraphService").Methods()
	sdk.Handle(p, m.ByName("GetDataUseCheckup"), s.getDataUseCheckup)
	sdk.Handle(p, m.ByName("CertifyDataUseCheckup"), s.certifyDataUseCheckup)
}

func (s *Service) getDataUseCheckup(ctx context.Context, _ *sdk.Call, req *corev1.GetDataUseCheckupRequest) (*corev1.DataUseCheckup, error) {
	c, err := s.id.Apps.DataUseCheckup(ctx, req.GetAppId())
	if err != nil {
		return nil, s.mapErr(err, "App "+req.GetAppId())
	}
	return CheckupProto(c), nil
}

func (s *Service) certifyDataUseCheckup(ctx context.Context, call *sdk.Call, req *corev1.CertifyDataUseCheckupRequest) (*corev1.DataUseCheckup, error) {
	if !req.GetCertify() {
		return nil, sdk.Invalid("certify", "Invalid parameter: certify must be true: the Admin certifies how the app uses each approved scope.")
	}
	c, err := s.id.Apps.CertifyDataUse(ctx, req.GetAppId(), call.Principal().UserID, req.GetUses())
	var field *identity.FieldError
	if errors.As(err, &field) {
		return nil, sdk.Invalid(field.Field, "Invalid parameter: %s.", field.Error())
	}
	if err != nil {
		return nil, s.mapErr(err, "App "+req.GetAppId())
	}
	// The app's credentials carry the due time: a suspended app works
	// again at once here, within the cache's bound on other gateways.
	s.appChanged(req.GetAppId())
	return CheckupProto(c), nil
}

// CheckupProto is an app's checkup as the Graph answers it (and the
// console shows it).
func CheckupProto(c identity.Checkup) *corev1.DataUseCheckup {
	out := &corev1.DataUseCheckup{Status: string(c.Status), Scopes: nonNil(c.Scopes)}
	if !c.DueAt.IsZero() {
		out.DueTime = ptr(c.DueAt.UTC().Format(time.RFC3339))
	}
	if !c.CertifiedAt.IsZero() {
		out.CertifiedTime = ptr(c.CertifiedAt.UTC().Format(time.RFC3339))
	}
	return out
}
