package sdk

import (
	"context"

	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// Manifest ends registration and returns the plugin's manifest, for running
// it inside the host process: the gateway serves its own services this way,
// through the same routing, validation and access checks as a plugin's.
func (p *Plugin) Manifest() (*pluginv1.Manifest, error) {
	if err := p.freeze(); err != nil {
		return nil, err
	}
	return proto.Clone(p.manifest).(*pluginv1.Manifest), nil
}

// InvokeStream runs one server-streaming call in this process, handing each
// response to send.
func (p *Plugin) InvokeStream(ctx context.Context, req *pluginv1.InvokeRequest, send func(*pluginv1.InvokeResponse) error) error {
	return p.invokeStream(ctx, req, send)
}
