package main

import (
	"testing"

	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/plugintest"
)

// The plugin's Graph bindings and access rules follow the rules the gateway
// applies when it loads the plugin (internal/plugin/manifestcheck). Describing
// the plugin needs no database.
func TestTheManifestFollowsTheGatewaysLoadRules(t *testing.T) {
	t.Parallel()
	p := sdk.New(sdk.Info{Name: "lenses", Version: version})
	register(p, nil)
	plugintest.CheckManifest(t, plugintest.Start(t, p))
}
