// Command testplugin is a plugin for the tests of the plugin host and SDK.
// Environment variables make it misbehave on purpose:
//
//	SVC_TESTPLUGIN_NAME          the plugin's name (default "testplugin")
//	SVC_TESTPLUGIN_VERSION       its version (default "1.0.0")
//	SVC_TESTPLUGIN_STDOUT        a line to print on stdout before the handshake
//	SVC_TESTPLUGIN_PROTOCOL      a plugin protocol version to speak instead of ours (1: go-plugin's handshake)
//	SVC_TESTPLUGIN_CRASH_AFTER   exit abruptly while serving the N-th call
//	SVC_TESTPLUGIN_UNHEALTHY     fail the health check with this message
//	SVC_TESTPLUGIN_CPUPROFILE    a CPU profile of its whole run, as every plugin writes (SVC_<NAME>_CPUPROFILE)
//
// Installed under the name "testplugin-alias" it is a plugin of that name
// that serves only AliasService, which claims TestService's Graph node.
//
// It is never installed in bin/plugins.
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

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
// plugin protocol: the handshake line of that version (version 1's is
// go-plugin's), then nothing until the gateway closes stdin.
func serveOtherProtocol(v string) {
	if _, err := strconv.Atoi(v); err != nil {
		fmt.Fprintln(os.Stderr, "testplugin: SVC_TESTPLUGIN_PROTOCOL:", err)
		os.Exit(2)
	}
	sock := filepath.Join(os.Getenv(protocol.EnvFastLaneDir), protocol.FastLaneSocket)
	if v == "1" {
		fmt.Printf("1|1|unix|%s|grpc|\n", sock)
	} else {
		fmt.Printf("svc-plugin|%s|%s\n", v, sock)
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
}
