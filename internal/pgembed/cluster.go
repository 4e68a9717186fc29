package pgembed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Port is the port the server is configured with. Nothing listens on TCP, and the socket folder
// is private to the cluster, so the port only names the socket file (.s.PGSQL.5432).
const Port = 5432

// Superuser is the database role initdb creates. Local connections are trusted (except for
// members of [PasswordGroup]), so its URLs carry no password; the private socket folder is what
// keeps other users out.
const Superuser = "postgres"

const (
	// defaultStartTimeout bounds Start when the caller's context has no deadline, so a server
	// stuck in a long crash recovery or a wedged initdb surfaces as an error instead of a hang.
	defaultStartTimeout = 2 * time.Minute
	// defaultStopTimeout bounds a fast shutdown (it waits for a checkpoint) before escalating.
	defaultStopTimeout = time.Minute
	// pollInterval paces the checks of postmaster.pid and of process liveness.
	pollInterval = 20 * time.Millisecond
)

// Options configures [Start].
type Options struct {
	// Dir is the cluster folder, for example <data-dir>/pg. It is created if missing.
	Dir string
	// Logger receives pgembed's own messages (not the server log). Nil means slog.Default().
	Logger *slog.Logger
	// BinDir is the folder holding initdb and postgres. Empty means: the folder of the
	// postgres found on PATH, else the highest /usr/lib/postgresql/<version>/bin.
	BinDir string
	// Fast turns off fsync, synchronous_commit and full_page_writes: much faster, and a crash
	// of the machine can lose or corrupt the data. For test clusters only.
	Fast bool
	// Detach lets the server outlive the calling process: no parent-death signal, its own
	// session. pgtestd uses it; the server is then stopped with StopDir (or a later Start).
	Detach bool
	// Password, when set, is the superuser's password, and every connection must then give its
	// role's password (SCRAM-SHA-256): processes that can reach the socket, such as plugins
	// run as the same account, can connect only as a role whose password they were given.
	// Empty means the private socket is trusted (except for members of [PasswordGroup]).
	Password string
}

// Cluster is a running server started by [Start].
type Cluster struct {
	layout   layout
	logger   *slog.Logger
	cmd      *exec.Cmd
	password string // the superuser's, or empty when the socket is trusted

	// done is closed once the server process has exited and exitErr is set.
	done    chan struct{}
	exitErr error

	mu       sync.Mutex
	ready    bool // the server accepted connections once; a later exit is a failure
	stopping bool // Stop was called; the coming exit is expected
}

// Start starts the cluster in opts.Dir, creating it with initdb on first use, and returns once
// the server accepts connections. A server still running in that folder (left by a crash or
// started by another Cluster value) is shut down first. If the context has no deadline, Start
// gives up after two minutes.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if !supported {
		return nil, errUnsupported
	}
	if opts.Dir == "" {
		return nil, errors.New("pgembed: Options.Dir is empty: give the folder that holds (or will hold) the cluster")
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultStartTimeout)
		defer cancel()
	}

	bins, err := findBinaries(opts.BinDir)
	if err != nil {
		return nil, err
	}
	acct, err := serverAccount(ctx, logger)
	if err != nil {
		return nil, err
	}
	l, err := prepareLayout(opts.Dir, acct, acct != nil, logger)
	if err != nil {
		return nil, err
	}
	unlock, err := lockDir(ctx, l, acct)
	if err != nil {
		return nil, err
	}
	defer func() { unlock() }()
	// A cluster an earlier version kept outside its folder (under root,
	// behind a link) is moved in while no server runs from it.
	if abs, _ := filepath.Abs(opts.Dir); acct != nil && relocatedTarget(abs) != "" {
		if err := takeOver(ctx, l, logger); err != nil {
			return nil, err
		}
		moved, err := moveIn(abs, l, acct, logger)
		if err != nil {
			return nil, err
		}
		if moved {
			unlock()
			unlock = func() {}
			if l, err = prepareLayout(opts.Dir, acct, true, logger); err != nil {
				return nil, err
			}
			if unlock, err = lockDir(ctx, l, acct); err != nil {
				return nil, err
			}
		}
	}

	logFile, err := openLog(l, acct)
	if err != nil {
		return nil, err
	}
	// The child has its own copy of the descriptor; ours is only needed while starting.
	defer logFile.Close()

	if err := takeOver(ctx, l, logger); err != nil {
		return nil, err
	}
	if err := ensureInitialized(ctx, bins, l, acct, opts.Fast, logFile, logger); err != nil {
		return nil, err
	}
	if err := writeAuth(l, acct, false); err != nil {
		return nil, err
	}

	var c *Cluster
	for try := 1; ; try++ {
		c = &Cluster{layout: l, logger: logger, done: make(chan struct{}), password: opts.Password}
		logStart, _ := logFile.Seek(0, io.SeekEnd)
		if err := c.spawn(bins, acct, opts, logFile); err != nil {
			return nil, err
		}
		err := c.waitReady(ctx)
		if err == nil {
			break
		}
		c.mu.Lock()
		c.stopping = true
		c.mu.Unlock()
		c.kill()
		tail := logTail(l.logPath, logStart)
		// The children of a postmaster killed a moment ago can still be
		// detaching from its shared memory after takeOver saw them go: the
		// new postmaster refuses the segment and exits before touching
		// anything, so it is started again once that has passed.
		if try < 5 && strings.Contains(tail, "pre-existing shared memory block") && ctx.Err() == nil {
			logger.Info("old PostgreSQL shared memory still attached; starting again", "dir", l.dir, "try", try)
			time.Sleep(time.Duration(try) * 200 * time.Millisecond)
			continue
		}
		return nil, fmt.Errorf("pgembed: postgres in %s did not start: %w%s", l.dir, err, tail)
	}
	if opts.Password != "" {
		if err := c.requirePasswords(ctx, acct, opts.Password); err != nil {
			_ = c.Stop(context.Background())
			return nil, err
		}
	}
	c.mu.Lock()
	c.ready = true
	c.mu.Unlock()
	removeMovedFrom(l, logger)
	logger.Info("embedded PostgreSQL ready",
		"dir", l.dir, "pid", c.cmd.Process.Pid, "socket_dir", l.socketDir, "fast", opts.Fast)
	return c, nil
}

// URL returns a connection URL for database dbname over the cluster's unix socket, as the
// superuser (with its password, when it has one: never log the URL), understood by pgx and
// libpq.
func (c *Cluster) URL(dbname string) string {
	user := url.User(Superuser)
	if c.password != "" {
		user = url.UserPassword(Superuser, c.password)
	}
	return c.urlWith(user, dbname)
}

func (c *Cluster) urlWith(user *url.Userinfo, dbname string) string {
	q := url.Values{}
	q.Set("host", c.layout.socketDir)
	q.Set("port", strconv.Itoa(Port))
	// TLS over a private unix socket adds nothing; saying so spares pgx the attempt.
	q.Set("sslmode", "disable")
	// A space is %20, not +: pgx from 5.12 reads a + in the query literally.
	// (Encode writes a literal + as %2B, so the replacement is exact.)
	u := url.URL{Scheme: "postgres", User: user, Path: "/" + dbname, RawQuery: strings.ReplaceAll(q.Encode(), "+", "%20")}
	return u.String()
}

// LogPath returns the path of the server log.
func (c *Cluster) LogPath() string { return c.layout.logPath }

// PID returns the process id of the postmaster.
func (c *Cluster) PID() int { return c.cmd.Process.Pid }

// Wait returns a channel that receives one value when the server process exits, then is closed:
// nil after a clean Stop, otherwise an error saying how the server went away (it crashed, was
// killed, or another Start took the folder over). A gateway selects on it to notice that its
// database is gone.
func (c *Cluster) Wait() <-chan error {
	ch := make(chan error, 1)
	go func() {
		<-c.done
		ch <- c.exitErr
		close(ch)
	}()
	return ch
}

// Stop shuts the server down with a fast shutdown (sessions are ended, a checkpoint is written)
// and waits for it to exit. If that does not finish before ctx ends (or within a minute when ctx
// has no deadline), the server is stopped immediately and the next start runs crash recovery.
// Stop is idempotent and returns nil if the server had already exited; Wait reports why.
func (c *Cluster) Stop(ctx context.Context) error {
	c.mu.Lock()
	c.stopping = true
	c.mu.Unlock()
	defer c.layout.removeFallbackSocketDir()

	select {
	case <-c.done:
		return nil
	default:
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultStopTimeout)
		defer cancel()
	}
	// SIGTERM would be a "smart" shutdown, which waits for every client to disconnect on its own.
	_ = c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-c.done:
		return c.stopErr()
	case <-ctx.Done():
	}
	c.logger.Warn("fast shutdown of embedded PostgreSQL timed out; stopping it immediately", "dir", c.layout.dir)
	c.kill()
	return fmt.Errorf("pgembed: fast shutdown of postgres in %s did not finish in time (%w); it was stopped immediately and will run crash recovery on next start", c.layout.dir, ctx.Err())
}

func (c *Cluster) stopErr() error {
	var exit *exec.ExitError
	if errors.As(c.exitErr, &exit) {
		return fmt.Errorf("pgembed: postgres in %s exited with %v during shutdown; see %s", c.layout.dir, exit, c.layout.logPath)
	}
	return nil
}

// kill stops the server immediately: SIGQUIT makes the postmaster stop its children at once,
// and SIGKILL is the last resort if even that hangs.
func (c *Cluster) kill() {
	_ = c.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-c.done:
		return
	case <-time.After(5 * time.Second):
	}
	_ = c.cmd.Process.Kill()
	<-c.done
}

// spawn starts postgres and a goroutine that reaps it.
func (c *Cluster) spawn(bins binaries, acct *account, opts Options, logFile *os.File) error {
	cmd := exec.Command(bins.postgres, serverArgs(c.layout, opts.Fast)...)
	cmd.Dir = c.layout.dir
	cmd.Env = childEnv()
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = serverProcAttr(acct, opts.Detach)
	c.cmd = cmd

	started := make(chan error, 1)
	go func() {
		// The kernel sends the parent-death signal when the thread that forked the child exits,
		// not the process. Go may retire threads, so fork from a thread this goroutine keeps
		// locked until the server exits.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- fmt.Errorf("pgembed: start %s: %w", bins.postgres, err)
			return
		}
		started <- nil
		err := cmd.Wait()
		c.exited(err)
	}()
	return <-started
}

func (c *Cluster) exited(err error) {
	c.mu.Lock()
	ready, stopping := c.ready, c.stopping
	c.mu.Unlock()
	status := "exit status 0"
	if err != nil {
		status = err.Error()
	}
	switch {
	case !ready && !stopping:
		c.exitErr = fmt.Errorf("postgres exited during startup (%s)", status)
	case !stopping:
		c.exitErr = fmt.Errorf("pgembed: postgres in %s (pid %d) stopped without Stop (%s): it crashed, was killed or another Start took the folder over; see %s",
			c.layout.dir, c.cmd.Process.Pid, status, c.layout.logPath)
		c.logger.Error("embedded PostgreSQL exited unexpectedly", "dir", c.layout.dir, "pid", c.cmd.Process.Pid, "status", status)
	case err != nil:
		c.exitErr = err
	}
	close(c.done)
}

// waitReady polls postmaster.pid, as pg_ctl does: the postmaster writes "ready" into it once it
// accepts connections, which needs no connection attempt and no password.
func (c *Cluster) waitReady(ctx context.Context) error {
	pid := c.cmd.Process.Pid
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		if postmasterReady(c.layout.pidFile(), pid) {
			return nil
		}
		select {
		case <-c.done:
			return c.exitErr
		case <-ctx.Done():
			return fmt.Errorf("waiting for the server to accept connections: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// postmasterReady reports whether postmaster.pid belongs to pid and says "ready" (line 8 since
// PostgreSQL 10).
func postmasterReady(path string, pid int) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 8 || strings.TrimSpace(lines[0]) != strconv.Itoa(pid) {
		return false
	}
	return strings.TrimSpace(lines[7]) == "ready"
}

// serverArgs are passed on the command line rather than written to postgresql.conf so that they
// always win: they are what makes the cluster private (no TCP, private socket) and Fast can
// differ from one start to the next.
func serverArgs(l layout, fast bool) []string {
	settings := []string{
		"listen_addresses=",
		"unix_socket_directories=" + quoteListElement(l.socketDir),
		"port=" + strconv.Itoa(Port),
		// Room for the gateway, the plugins' pools and parallel test packages.
		"max_connections=200",
		"shared_buffers=128MB",
		"log_line_prefix=%m [%p] ",
		"log_timezone=UTC",
	}
	if fast {
		settings = append(settings,
			"fsync=off",
			"synchronous_commit=off",
			"full_page_writes=off",
			// Tests create and drop many databases; fewer checkpoints keep that quick.
			"checkpoint_timeout=30min",
			"max_wal_size=2GB",
		)
	}
	args := []string{"-D", l.dataDir}
	for _, s := range settings {
		args = append(args, "-c", s)
	}
	return args
}

// quoteListElement quotes one element of a list-valued setting such as unix_socket_directories,
// so that commas and spaces in the path stay part of it.
func quoteListElement(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// childEnv is the environment without libpq's PG* variables: PGDATA, PGPORT and friends must not
// redirect initdb or postgres to another cluster.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PG") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// logTail returns what was appended to the log since offset (its last lines), formatted to be
// appended to an error message.
func logTail(path string, offset int64) string {
	const maxBytes, maxLines = 4096, 30
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return ""
	}
	start := max(offset, info.Size()-maxBytes)
	if start >= info.Size() {
		return ""
	}
	buf := make([]byte, info.Size()-start)
	n, _ := f.ReadAt(buf, start)
	lines := strings.Split(strings.TrimRight(string(buf[:n]), "\n"), "\n")
	if len(lines) > maxLines {
		lines = lines[len(lines)-maxLines:]
	}
	return fmt.Sprintf("\n--- end of %s ---\n%s", filepath.Clean(path), strings.Join(lines, "\n"))
}
