// Command testplugin is a plugin for the tests of the plugin host and SDK.
// Environment variables make it misbehave on purpose:
//
//	SVC_TESTPLUGIN_NAME          the plugin's name (default "testplugin")
//	SVC_TESTPLUGIN_VERSION       its version (default "1.0.0")
//	SVC_TESTPLUGIN_STDOUT        a line to print on stdout before the handshake
//	SVC_TESTPLUGIN_PROTOCOL      a plugin protocol version to speak instead of ours
//	SVC_TESTPLUGIN_CRASH_AFTER   exit abruptly while serving the N-th call
//	SVC_TESTPLUGIN_UNHEALTHY     fail the health check with this message
//	SVC_TESTPLUGIN_CPUPROFILE    a CPU profile of its whole run, as every plugin writes (SVC_<NAME>_CPUPROFILE)
//	SVC_TESTPLUGIN_NO_FAST_LANE  offer no fast lane: every call comes over gRPC
//
// Installed under the name "testplugin-alias" it is a plugin of that name
// that serves only AliasService, which claims TestService's Graph node.
//
// It is never installed in bin/plugins.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/svcplatform/svc/internal/plugin/protocol"
	"github.com/svcplatform/svc/internal/testplugin/testsvc"
)

func main() {
	if line := os.Getenv("SVC_TESTPLUGIN_STDOUT"); line != "" {
		fmt.Println(line)
	}
	if v := os.Getenv("SVC_TESTPLUGIN_PROTOCOL"); v != "" {
		serveOtherProtocol(v)
		return
	}
	if os.Getenv("SVC_TESTPLUGIN_NO_FAST_LANE") != "" {
		_ = os.Unsetenv(protocol.EnvFastLaneDir)
	}
	crashAfter, _ := strconv.ParseInt(os.Getenv("SVC_TESTPLUGIN_CRASH_AFTER"), 10, 64)
	version := os.Getenv("SVC_TESTPLUGIN_VERSION")
	if version == "" {
		version = "1.0.0"
	}
	name := os.Getenv("SVC_TESTPLUGIN_NAME")
	alias := filepath.Base(os.Args[0]) == "testplugin-alias"
	if alias {
		name = "testplugin-alias"
	}
	testsvc.New(testsvc.Config{
		Alias:      alias,
		Name:       name,
		Version:    version,
		CrashAfter: crashAfter,
		Unhealthy:  os.Getenv("SVC_TESTPLUGIN_UNHEALTHY"),
	}).Serve()
}

// serveOtherProtocol plays a plugin built against another version of the
// plugin protocol: same magic cookie, another version in the handshake.
func serveOtherProtocol(v string) {
	version, err := strconv.Atoi(v)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testplugin: SVC_TESTPLUGIN_PROTOCOL:", err)
		os.Exit(2)
	}
	hs := protocol.Handshake
	hs.ProtocolVersion = uint(version)
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig: hs,
		VersionedPlugins: map[int]goplugin.PluginSet{
			version: {protocol.PluginKey: &protocol.GoPlugin{Serve: func(*goplugin.GRPCBroker, *grpc.Server) error { return nil }}},
		},
		GRPCServer: goplugin.DefaultGRPCServer,
	})
}
