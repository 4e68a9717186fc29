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

	"github.com/svcplatform/svc/gateway/internal/gateway"
)

func main() {
	err := gateway.Run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(1)
	}
}
