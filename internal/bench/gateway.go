package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
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

// GatewayOptions start one bin/gateway process.
type GatewayOptions struct {
	// Bin is the gateway binary.
	Bin        string
	PluginsDir string
	DataDir    string
	// DatabaseURL is passed as SVC_DATABASE_URL; empty runs the embedded
	// cluster under DataDir.
	DatabaseURL string
	// Args are extra flags (e.g. --config FILE).
	Args []string
	// Env are extra environment variables (KEY=value), e.g. the profile
	// files of make profile.
	Env []string
}

// Gateway is a running gateway process.
type Gateway struct {
	URL   string
	Addr  string
	Start time.Time
	cmd   *exec.Cmd
	logs  *lockedBuffer
	done  chan struct{}
	err   error
}

// StartGateway starts the gateway on 127.0.0.1:0 and waits for its
// "gateway serving" log line (not for health: see WaitHealthy). The
// process gets SIGTERM if this one dies.
func StartGateway(ctx context.Context, o GatewayOptions) (*Gateway, error) {
	args := append([]string{"--addr", "127.0.0.1:0", "--data-dir", o.DataDir, "--plugins-dir", o.PluginsDir,
		"--log-level", "info"}, o.Args...)
	cmd := exec.Command(o.Bin, args...)
	cmd.Env = withoutEnv(os.Environ(), "SVC_DATABASE_URL")
	if o.DatabaseURL != "" {
		cmd.Env = append(cmd.Env, "SVC_DATABASE_URL="+o.DatabaseURL)
	}
	cmd.Env = append(cmd.Env, o.Env...)
	cmd.Stdout = io.Discard
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	g := &Gateway{cmd: cmd, logs: &lockedBuffer{}, done: make(chan struct{})}
	g.Start = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", o.Bin, err)
	}
	addrc := make(chan string, 1)
	go g.readLogs(stderr, addrc)
	go func() { g.err = cmd.Wait(); close(g.done) }()
	select {
	case g.Addr = <-addrc:
		g.URL = "http://" + g.Addr
		return g, nil
	case <-g.done:
		return nil, fmt.Errorf("gateway exited before serving (%v):\n%s", g.err, g.LogTail(40))
	case <-ctx.Done():
		g.Stop()
		return nil, fmt.Errorf("gateway did not log its address: %w:\n%s", ctx.Err(), g.LogTail(40))
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

func (g *Gateway) readLogs(r io.Reader, addrc chan<- string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	sent := false
	for sc.Scan() {
		line := sc.Bytes()
		g.logs.Write(append(line, '\n'))
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

// WaitHealthy polls /healthz every 5 ms until it answers 200 and returns
// the time since the process was started.
func (g *Gateway) WaitHealthy(ctx context.Context) (time.Duration, error) {
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		res, err := client.Get(g.URL + "/healthz")
		if err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return time.Since(g.Start), nil
			}
		}
		select {
		case <-g.done:
			return 0, fmt.Errorf("gateway exited (%v):\n%s", g.err, g.LogTail(40))
		case <-ctx.Done():
			return 0, fmt.Errorf("gateway not healthy: %w:\n%s", ctx.Err(), g.LogTail(40))
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// PID is the gateway's process id.
func (g *Gateway) PID() int { return g.cmd.Process.Pid }

// LogTail returns the last n log lines.
func (g *Gateway) LogTail(n int) string {
	lines := strings.Split(strings.TrimRight(g.logs.String(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Stop sends SIGTERM and waits up to 20 s, then kills the process.
func (g *Gateway) Stop() error {
	select {
	case <-g.done:
		return nil
	default:
	}
	_ = g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.done:
		return nil
	case <-time.After(20 * time.Second):
		_ = g.cmd.Process.Kill()
		<-g.done
		return errors.New("gateway did not stop within 20 s of SIGTERM; killed")
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
