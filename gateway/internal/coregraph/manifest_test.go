package coregraph_test

import (
	"testing"

	"github.com/svcplatform/svc/gateway/internal/coregraph"
	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/plugintest"
)

// The gateway's own Graph nodes follow the rules every plugin's manifest
// follows (route.Build applies them to the core too).
func TestTheCoreNodesFollowTheManifestRules(t *testing.T) {
	t.Parallel()
	core := sdk.New(sdk.Info{Name: "core", Version: "test"})
	coregraph.New(coregraph.Options{Identity: identity.New(nil)}).Register(core) // registering reads no data
	plugintest.CheckManifest(t, plugintest.Start(t, core))
}
