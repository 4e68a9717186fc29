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
	"strings"

	"github.com/svcplatform/svc/gateway/internal/gateway"
)

// commands are the gateway's commands besides serving, which `gateway
// help` lists. Each parses its own flags and never takes the data folder's
// lock: it runs beside the gateway serving that folder.
var commands = []struct {
	name, usage string
	run         func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}{
	{"admin", "admin staff --user <user id> [--revoke] [--data-dir ./var]: make a user platform staff (or, with --revoke, no longer)",
		gateway.Admin},
	{"backup", "backup --to <new folder> [--data-dir ./var]: copy a running gateway's embedded database and data files into a new data folder",
		gateway.Backup},
	{"database-url", "database-url [--data-dir ./var]: print the embedded database's URL, for psql \"$(bin/gateway database-url)\"",
		func(_ context.Context, args []string, stdout, stderr io.Writer) error {
			return gateway.DatabaseURL(args, stdout, stderr)
		}},
	{"listen", "listen --base-url <URL> --app <app id> --token <app key or team member's token> --forward-to <local URL> [--events <types>]: receive an app's webhooks on this machine over an outbound stream, forwarded signed to the local URL (no tunnel needed)",
		gateway.Listen},
	{"smoke", "smoke --base-url <URL> --credentials <file> [--receiver-addr 127.0.0.1:0] [--receiver-url <URL>] [--report-partner <id>]: check a running platform end to end (OAuth code + PKCE, me/pages, a post, a webhook handshake and signed delivery, a session message, a completion); one line per step, non-zero exit on a failure",
		gateway.Smoke},
	{"token", "token --user <username> --app <app id> [--scopes \"<list>\"] [--data-dir ./var]: print a user access token of a development-mode app",
		gateway.Token},
}

func main() {
	if len(os.Args) == 2 && (os.Args[1] == "--version" || os.Args[1] == "-version") {
		fmt.Println(versionLine())
		return
	}
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "help", "-h", "-help", "--help":
			usage(os.Stdout)
			return
		}
		for _, c := range commands {
			if c.name != os.Args[1] {
				continue
			}
			if err := c.run(context.Background(), os.Args[2:], os.Stdout, os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) {
				fmt.Fprintln(os.Stderr, "gateway:", err)
				os.Exit(1)
			}
			return
		}
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

// usage lists the commands, then the flags of serving.
func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage:\n  gateway [flags]          serve the platform (flags below)\n  gateway <command> …      (gateway <command> --help shows its flags)\n\nCommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %s\n", c.usage)
	}
	fmt.Fprintln(w, "  help: this text\n  --version: what this binary is, and the commit it was built from\n\nFlags (each also SVC_<FLAG> in the environment, --data-dir: SVC_DATA_DIR):")
	gateway.PrintFlags(w)
}

// commit is the commit the binary was built from, "-dirty" appended when
// the work tree had changes, set by `make build` (-ldflags -X
// main.commit=…): it knows it even where Go's own VCS stamping
// (vcs.revision, used when commit is empty) does not reach, such as a git
// worktree or GOFLAGS=-buildvcs=false.
var commit string

// versionLine says what this binary is: the gateway's release, the plugin
// protocol it speaks, the Go toolchain and the commit it was built from
// when the build recorded one.
func versionLine() string {
	line := fmt.Sprintf("svc gateway %s (plugin protocol %d)", gateway.Version, gateway.PluginProtocol)
	rev, modified := strings.CutSuffix(commit, "-dirty")
	if info, ok := debug.ReadBuildInfo(); ok {
		line += " " + info.GoVersion
		for _, s := range info.Settings {
			switch {
			case s.Key == "vcs.revision" && rev == "":
				rev = s.Value
			case s.Key == "vcs.modified" && commit == "":
				modified = s.Value == "true"
			}
		}
	}
	if rev == "" {
		return line + " (commit unknown: built without version control information)"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	line += " commit " + rev
	if modified {
		line += " (with uncommitted changes)"
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
