// Command gateway runs the platform: one HTTP port for REST, Connect, gRPC
// and gRPC-Web, the product plugins as child processes, and PostgreSQL
// (embedded unless SVC_DATABASE_URL is set). See the README.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"

	"github.com/svcplatform/svc/gateway/internal/gateway"
)

func main() {
	if len(os.Args) == 2 && (os.Args[1] == "--version" || os.Args[1] == "-version") {
		fmt.Println(versionLine())
		return
	}
	if len(os.Args) > 1 && (os.Args[1] == "backup" || os.Args[1] == "database-url") {
		command := map[string]func([]string, io.Writer, io.Writer) error{
			"backup": func(args []string, stdout, stderr io.Writer) error {
				return gateway.Backup(context.Background(), args, stdout, stderr)
			},
			"database-url": gateway.DatabaseURL,
		}[os.Args[1]]
		if err := command(os.Args[2:], os.Stdout, os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "gateway:", err)
			os.Exit(1)
		}
		return
	}
	// SVC_CPUPROFILE=<file> records a CPU profile of the whole run, for
	// performance work (go tool pprof bin/gateway <file>).
	if path := os.Getenv("SVC_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "gateway: cpu profile:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	// SVC_MEMPROFILE=<file> writes the allocation profile at exit.
	if path := os.Getenv("SVC_MEMPROFILE"); path != "" {
		defer writeAllocs(path)
	}
	err := gateway.Run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

// versionLine says what this binary is: the gateway's release, the plugin
// protocol it speaks, the Go toolchain and the commit it was built from
// when the build recorded one.
func versionLine() string {
	line := fmt.Sprintf("svc gateway %s (plugin protocol %d)", gateway.Version, gateway.PluginProtocol)
	if info, ok := debug.ReadBuildInfo(); ok {
		line += " " + info.GoVersion
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				line += " commit " + s.Value[:12]
			}
		}
	}
	return line
}

// writeAllocs writes the allocation profile (since the start, and what is
// in use) to path.
func writeAllocs(path string) {
	f, err := os.Create(path)
	if err == nil {
		runtime.GC()
		err = pprof.Lookup("allocs").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gateway: allocation profile:", err)
	}
}
