// Package gatewayproc runs one bin/gateway process for the tools that need
// a real gateway: the e2e test harness (internal/gatewaytest) and the
// benchmarks (bench). It starts the binary on 127.0.0.1:0, learns
// the address from its "gateway serving" log line, keeps the logs, waits for
// /healthz or /readyz, and stops it with SIGTERM. It knows no test
// framework: failures are errors, for the caller to report.
package gatewayproc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options start one gateway process.
type Options struct {
	// Bin is the gateway binary.
	Bin        string
	PluginsDir string
	DataDir    string
	// DatabaseURL is passed as SVC_DATABASE_URL; empty runs the embedded
	// cluster under DataDir (a SVC_DATABASE_URL of this process's
	// environment is not passed on).
	DatabaseURL string
	// LogLevel is --log-level; default "info".
	LogLevel string
	// Args are extra flags (e.g. --config FILE).
	Args []string
	// Env are extra environment variables (KEY=value).
	Env []string
	// RunAs, when set, is the user the gateway runs as (this process must
	// be root): to try an unprivileged installation.
	RunAs *syscall.Credential
}

// Process is a running gateway.
type Process struct {
	// URL is http://Addr.
	URL  string
	Addr string
	// Start is when the process was started.
	Start time.Time
	cmd   *exec.Cmd
	logs  *lockedBuffer
	done  chan struct{}
	err   error
}

// StopGrace is how long Stop waits after SIGTERM before it kills.
const StopGrace = 20 * time.Second

// Start starts the gateway and waits, until ctx ends, for its "gateway
// serving" log line (not for health: see WaitHealthy and WaitReady). The
// process gets SIGTERM if this one dies.
func Start(ctx context.Context, o Options) (*Process, error) {
	level := o.LogLevel
	if level == "" {
		level = "info"
	}
	args := append([]string{"--addr", "127.0.0.1:0", "--data-dir", o.DataDir, "--plugins-dir", o.PluginsDir,
		"--log-level", level}, o.Args...)
	cmd := exec.Command(o.Bin, args...)
	cmd.Env = withoutEnv(os.Environ(), "SVC_DATABASE_URL")
	if o.DatabaseURL != "" {
		cmd.Env = append(cmd.Env, "SVC_DATABASE_URL="+o.DatabaseURL)
	}
	cmd.Env = append(cmd.Env, o.Env...)
	cmd.Stdout = io.Discard
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Credential: o.RunAs}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	p := &Process{cmd: cmd, logs: &lockedBuffer{}, done: make(chan struct{})}
	p.Start = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", o.Bin, err)
	}
	addrc := make(chan string, 1)
	go p.readLogs(stderr, addrc)
	go func() { p.err = cmd.Wait(); close(p.done) }()
	select {
	case p.Addr = <-addrc:
		p.URL = "http://" + p.Addr
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("gateway exited before serving (%v):\n%s", p.err, p.Logs())
	case <-ctx.Done():
		_ = p.Stop()
		return nil, fmt.Errorf("gateway did not log its address: %w:\n%s", ctx.Err(), p.Logs())
	}
}

func withoutEnv(env []string, name string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// readLogs keeps the JSON log lines and reports the serving address.
func (p *Process) readLogs(r io.Reader, addrc chan<- string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	sent := false
	for sc.Scan() {
		line := sc.Bytes()
		p.logs.Write(append(line, '\n'))
		if sent {
			continue
		}
		var rec struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Msg == "gateway serving" && rec.Addr != "" {
			addrc <- rec.Addr
			sent = true
		}
	}
}

// WaitHealthy polls /healthz (the process serves) every 5 ms until it
// answers 200, and returns the time since the process was started: the
// start-up time of make bench.
func (p *Process) WaitHealthy(ctx context.Context) (time.Duration, error) {
	return p.wait(ctx, &http.Client{Timeout: 2 * time.Second}, p.URL+"/healthz", 5*time.Millisecond)
}

// WaitReady polls url (the gateway's /readyz: its database is reachable and
// every plugin serves) with client every 50 ms until it answers 200.
func (p *Process) WaitReady(ctx context.Context, client *http.Client, url string) (time.Duration, error) {
	return p.wait(ctx, client, url, 50*time.Millisecond)
}

func (p *Process) wait(ctx context.Context, client *http.Client, url string, every time.Duration) (time.Duration, error) {
	for {
		res, err := client.Get(url)
		if err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return time.Since(p.Start), nil
			}
		}
		select {
		case <-p.done:
			return 0, fmt.Errorf("gateway exited (%v):\n%s", p.err, p.LogTail(40))
		case <-ctx.Done():
			return 0, fmt.Errorf("gateway not healthy: %w:\n%s", ctx.Err(), p.LogTail(40))
		case <-time.After(every):
		}
	}
}

// PID is the gateway's process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Signal sends sig to the gateway.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Logs returns everything the gateway logged so far.
func (p *Process) Logs() string { return p.logs.String() }

// LogTail returns the last n log lines.
func (p *Process) LogTail(n int) string {
	lines := strings.Split(strings.TrimRight(p.logs.String(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Stop sends SIGTERM and waits up to StopGrace, then kills the process.
func (p *Process) Stop() error {
	select {
	case <-p.done:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(StopGrace):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("gateway did not stop within %s of SIGTERM; killed", StopGrace)
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(b)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
