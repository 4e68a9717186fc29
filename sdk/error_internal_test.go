package sdk

import (
	"testing"

	"github.com/svcplatform/svc/internal/plugin/protocol"
)

// The error families a plugin names are the ones the protocol carries and
// the gateway writes.
func TestTheErrorFamiliesAreTheProtocols(t *testing.T) {
	t.Parallel()
	for _, c := range [][2]string{
		{TypeOAuth, protocol.TypeOAuth}, {TypeGraphMethod, protocol.TypeGraphMethod}, {TypeInvalid, protocol.TypeInvalid},
		{TypeRateLimit, protocol.TypeRateLimit}, {TypeUnavailable, protocol.TypeUnavailable},
		{TypeInternal, protocol.TypeInternal}, {TypeMessaging, protocol.TypeMessaging},
	} {
		if c[0] != c[1] {
			t.Errorf("sdk %q, protocol %q", c[0], c[1])
		}
	}
}
