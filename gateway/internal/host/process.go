package host

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/svcplatform/svc/internal/plugin/protocol"
)

// process is one running process of a plugin. A hot swap runs two processes of
// the same plugin side by side until the old one has drained.
type process struct {
	loaded    *Loaded
	pid       int
	startedAt time.Time
	dir       string // private socket folder, removed with the process
	// profiles are copied out of dir when the process stops.
	profiles []profileCopy

	proc *pluginProc
	lane *protocol.LaneClient // every call to the plugin
	host *hostLane            // the Host service's socket for this process
	// laneSocket is the socket the plugin's lane listens on.
	laneSocket string

	// inflight counts calls that hold this process. Once closing is set
	// no new call may hold it, and drained is closed when the count is
	// zero.
	inflight  atomic.Int64
	closing   atomic.Bool
	drained   chan struct{}
	drainOnce sync.Once

	// stopping is set before the host kills the process, so that its exit
	// is not taken for a crash.
	stopping atomic.Bool
	killOnce sync.Once
	killed   chan struct{} // closed when the process is being killed
}

// acquire returns the process taking m's calls, counted as in flight, or
// nil when the plugin is not serving. The caller must release it.
//
// A swap stores the new process before it marks the old one closing, and
// a call counts itself before it checks closing; so a call either sees
// closing and moves on to the new process, or is counted before the
// drain looks at the count.
func (m *managed) acquire() *process {
	for {
		g := m.current.Load()
		if g == nil {
			return nil
		}
		g.inflight.Add(1)
		if !g.closing.Load() {
			return g
		}
		g.release()
		if m.current.Load() == g {
			return nil // closing while still current: the host is closing
		}
	}
}

func (g *process) release() {
	if g.inflight.Add(-1) == 0 && g.closing.Load() {
		g.drainOnce.Do(func() { close(g.drained) })
	}
}

// drain refuses new calls and waits until those in flight are done, ctx
// ends, or timeout passes; it tells whether every call finished.
func (g *process) drain(ctx context.Context, timeout time.Duration) bool {
	g.closing.Store(true)
	if g.inflight.Load() == 0 {
		g.drainOnce.Do(func() { close(g.drained) })
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-g.drained:
		return true
	case <-ctx.Done():
	case <-g.killed:
	case <-t.C:
	}
	return false
}

// kill stops g's process (gracefully first: see pluginProc.kill) and
// removes its sockets.
func (h *Host) kill(g *process) {
	if g == nil {
		return
	}
	g.killOnce.Do(func() {
		g.stopping.Store(true)
		close(g.killed)
		_ = g.lane.Close()
		g.proc.kill()
		g.host.close()
		h.saveProfiles(g)
		_ = os.RemoveAll(g.dir)
		h.mu.Lock()
		delete(h.live, g)
		h.mu.Unlock()
	})
}

// retire drains g in the background, then kills it.
func (h *Host) retire(g *process) {
	if g == nil {
		return
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		// Not h.ctx: Close lets drains finish within its own deadline.
		if !g.drain(context.Background(), h.opts.DrainTimeout) {
			h.log.Warn("killing a replaced plugin process with calls still in flight",
				"plugin", g.loaded.Name, "pid", g.pid, "in_flight", g.inflight.Load())
		}
		h.kill(g)
		h.log.Info("replaced plugin process stopped", "plugin", g.loaded.Name, "pid", g.pid)
	}()
}

// pluginProc is a started plugin process: its stop pipe (closing it asks
// the plugin to stop: protocol.EnvStopFD), its stdout (the handshake line)
// and its exit.
type pluginProc struct {
	cmd    *exec.Cmd
	stop   *os.File
	stdout *os.File
	log    *slog.Logger
	exited chan struct{} // closed once the process has exited and been waited for
}

// startProcess starts cmd with its stop pipe and pipes on its stdout and
// stderr; its stderr lines are logged through log and their end kept in tail.
func startProcess(cmd *exec.Cmd, log *slog.Logger, tail io.Writer) (*pluginProc, error) {
	var files [6]*os.File // stop pipe r, w; stdout r, w; stderr r, w
	for i := 0; i < 6; i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			for _, f := range files[:i] {
				_ = f.Close()
			}
			return nil, err
		}
		files[i], files[i+1] = r, w
	}
	// The stop pipe is the plugin's fd 3 (the sandbox trampoline gives a
	// plugin /dev/null on stdin, and keeps other descriptors).
	cmd.ExtraFiles, cmd.Stdout, cmd.Stderr = []*os.File{files[0]}, files[3], files[5]
	cmd.Env = append(cmd.Env, protocol.EnvStopFD+"=3")
	err := cmd.Start()
	// ETXTBSY: the binary was written a moment ago and a child forked
	// meanwhile (by any goroutine of this process) still holds it open for
	// writing until it execs. That passes within milliseconds; an exec.Cmd
	// starts once, so a copy is tried.
	for try := 1; errors.Is(err, syscall.ETXTBSY) && try <= 5; try++ {
		time.Sleep(time.Duration(try) * 10 * time.Millisecond)
		*cmd = exec.Cmd{Path: cmd.Path, Args: cmd.Args, Env: cmd.Env, Dir: cmd.Dir,
			Stdin: cmd.Stdin, Stdout: cmd.Stdout, Stderr: cmd.Stderr,
			ExtraFiles: cmd.ExtraFiles, SysProcAttr: cmd.SysProcAttr}
		err = cmd.Start()
	}
	// The child holds its ends now.
	_ = files[0].Close()
	_ = files[3].Close()
	_ = files[5].Close()
	if err != nil {
		_ = files[1].Close()
		_ = files[2].Close()
		_ = files[4].Close()
		return nil, err
	}
	p := &pluginProc{cmd: cmd, stop: files[1], stdout: files[2], log: log, exited: make(chan struct{})}
	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		forwardStderr(log, files[4], tail)
		_ = files[4].Close()
	}()
	go func() {
		_ = cmd.Wait()
		// The last lines it wrote (a panic's trace) are logged before its
		// exit is reported, unless something else holds its stderr open.
		select {
		case <-stderrDone:
		case <-time.After(time.Second):
		}
		close(p.exited)
	}()
	return p, nil
}

// Why a handshake failed, besides the line it read (ParseHandshake).
var (
	errExited           = errors.New("the plugin exited before the handshake")
	errHandshakeTimeout = errors.New("no handshake in time")
)

// stdoutError is a line the plugin printed on stdout instead of the
// handshake.
type stdoutError struct{ line string }

func (e *stdoutError) Error() string {
	return fmt.Sprintf("the plugin printed %q before its handshake", e.line)
}

// handshake reads the plugin's handshake line within timeout and returns
// the lane socket it names. What the plugin prints on stdout afterwards is
// logged as a warning.
func (p *pluginProc) handshake(timeout time.Duration) (string, error) {
	lines := make(chan string, 1)
	go func() {
		r := bufio.NewReader(p.stdout)
		first := true
		for {
			line, err := r.ReadString('\n')
			if first {
				first = false
				if err == nil || line != "" {
					lines <- line
				} else {
					close(lines)
				}
			} else if line = strings.TrimRight(line, "\r\n"); line != "" {
				p.log.Warn("plugin wrote to stdout", "text", line)
			}
			if err != nil {
				_ = p.stdout.Close()
				return
			}
		}
	}()
	read := func(line string, ok bool) (string, error) {
		if !ok {
			return "", errExited
		}
		path, err := protocol.ParseHandshake(line)
		if errors.Is(err, protocol.ErrNotHandshake) {
			return "", &stdoutError{line: strings.TrimRight(line, "\r\n")}
		}
		return path, err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case line, ok := <-lines:
		return read(line, ok)
	case <-p.exited:
		// A plugin that printed its line and exited at once (one that
		// refuses this gateway's version, say) is judged by that line:
		// the pipe still holds it, or ends at once.
		select {
		case line, ok := <-lines:
			return read(line, ok)
		case <-time.After(exitedLineWait):
			return "", errExited
		}
	case <-t.C:
		return "", errHandshakeTimeout
	}
}

// exitedLineWait is how long the handshake still waits for the line of a
// plugin that has exited (its stdout is read by another goroutine).
const exitedLineWait = 200 * time.Millisecond

// stopGrace is how long a plugin has to stop once asked before it is
// killed.
const stopGrace = 2 * time.Second

// kill asks the process to stop (its stop pipe closes), and kills it when
// it has not within stopGrace.
func (p *pluginProc) kill() {
	_ = p.stop.Close()
	select {
	case <-p.exited:
		return
	case <-time.After(stopGrace):
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
}
