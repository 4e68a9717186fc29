package main

import (
	"testing"

	"github.com/svcplatform/svc/sdk/plugintest"
)

// The plugin's Graph bindings and access rules follow the rules the gateway
// applies when it loads the plugin (internal/plugin/manifestcheck).
func TestTheManifestFollowsTheGatewaysLoadRules(t *testing.T) {
	t.Parallel()
	plugintest.CheckManifest(t, setup(t).tp)
}
