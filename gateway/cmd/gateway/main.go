// Command gateway runs the platform: one HTTP port for REST, Connect, gRPC
// and gRPC-Web, the product plugins as child processes, and PostgreSQL
// (embedded unless SVC_DATABASE_URL is set). See the README.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/svcplatform/svc/gateway/internal/gateway"
)

func main() {
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
