package plugintest

import (
	"testing"

	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
)

// CheckManifest applies the gateway's load-time rules
// (internal/plugin/manifestcheck, the same package the gateway uses) to what
// the plugin described: its descriptors, its Graph node bindings and its
// access rules. It fails the test naming every broken rule, so a plugin
// that passes is not refused when the gateway loads it for these reasons
// (a node another plugin also binds can only be found there). It returns
// the plugin's bindings as the admin API lists them, sorted by procedure:
// "GET hello/{name}" for a Graph node, "RPC /svc.hello.v1.HelloService/SayHello".
func CheckManifest(t testing.TB, tp *Plugin) []string {
	t.Helper()
	p, err := manifestcheck.Check(tp.manifest)
	if err == nil {
		err = manifestcheck.Together([]*manifestcheck.Plugin{p})
	}
	if err != nil {
		t.Fatalf("plugintest: the gateway would refuse plugin %s: %v", tp.manifest.GetName(), err)
		return nil
	}
	return p.Routes()
}
