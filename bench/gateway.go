package bench

import (
	"context"

	"github.com/svcplatform/svc/internal/gatewayproc"
)

// GatewayOptions start one bin/gateway process (internal/gatewayproc, which
// the e2e harness uses too).
type GatewayOptions = gatewayproc.Options

// Gateway is a running gateway process.
type Gateway = gatewayproc.Process

// StartGateway starts the gateway on 127.0.0.1:0 and waits for its
// "gateway serving" log line (not for health: see WaitHealthy). The
// process gets SIGTERM if this one dies.
func StartGateway(ctx context.Context, o GatewayOptions) (*Gateway, error) {
	return gatewayproc.Start(ctx, o)
}
