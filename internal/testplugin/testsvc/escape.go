package testsvc

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"

	testpluginv1 "github.com/svcplatform/svc/gen/svc/testplugin/v1"
	"github.com/svcplatform/svc/internal/plugin/protocol"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/migrate"
)

// superuser is the embedded cluster's superuser (pgembed.Superuser).
const superuser = "postgres"

// Escape tries each way out of the plugin's containment that a hostile
// partner plugin would try (CONTRACT §15), from inside this process, and
// reports each outcome. The controls are what a contained plugin must still
// be able to do.
func (s *service) Escape(ctx context.Context, _ *sdk.Call, req *testpluginv1.EscapeRequest) (*testpluginv1.EscapeResponse, error) {
	s.count()
	out := &testpluginv1.EscapeResponse{Uid: int32(os.Getuid()), Pid: int32(os.Getpid()),
		FastLane: os.Getenv(protocol.EnvFastLaneDir) != "", Attempts: map[string]string{}}
	try := func(what string, err error) {
		if err == nil {
			out.Attempts[what] = "allowed"
		} else {
			out.Attempts[what] = "refused: " + err.Error()
		}
	}
	readFile := func(path string) error { _, err := os.ReadFile(path); return err }
	writeFile := func(dir string) error {
		path := filepath.Join(dir, "escaped-"+strconv.Itoa(os.Getpid()))
		err := os.WriteFile(path, []byte("out"), 0o644)
		if err == nil {
			_ = os.Remove(path)
		}
		return err
	}
	gateway := os.Getppid()
	proc := func(pid int, name string) string { return "/proc/" + strconv.Itoa(pid) + "/" + name }

	// The gateway's folder, key and database files.
	try("read the gateway's command line", readFile(proc(gateway, "cmdline")))
	try("list the data folder", func() error { _, err := os.ReadDir(req.GetDataDir()); return err }())
	try("read the master key", readFile(filepath.Join(req.GetDataDir(), "master.key")))
	try("read the development credentials", readFile(filepath.Join(req.GetDataDir(), "dev-credentials.json")))
	try("read the database's files", readFile(filepath.Join(req.GetDataDir(), "pg", "data", "PG_VERSION")))
	try("list the database's files", func() error { _, err := os.ReadDir(filepath.Join(req.GetDataDir(), "pg", "data")); return err }())

	// Other processes: the gateway and a sibling plugin.
	for who, pid := range map[string]int{"the gateway": gateway, "a sibling plugin": int(req.GetSiblingPid())} {
		try("read "+who+"'s environment", readFile(proc(pid, "environ")))
		try("read "+who+"'s memory", readMemFile(proc(pid, "mem")))
		try("read "+who+"'s memory with process_vm_readv", readRemote(pid))
		try("trace "+who, traceProcess(pid))
		try("signal "+who, unix.Kill(pid, 0))
	}

	// The gateway's terminal, and kernel surface through namespaces.
	try("share the gateway's session and terminal", sameSession(gateway))
	try("make a user namespace", func() error {
		cmd := exec.Command("/bin/true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET}
		return cmd.Run()
	}())

	// Writes outside its own folder.
	try("write in an open folder", writeFile(req.GetOpenDir()))
	try("write in /tmp", writeFile("/tmp"))
	try("write in the data folder", writeFile(req.GetDataDir()))
	if self, err := os.Executable(); err == nil {
		try("write beside its binary", writeFile(filepath.Dir(self)))
	}

	// The database, as anyone but its own role.
	own, err := url.Parse(os.Getenv(migrate.EnvDatabaseURL))
	if err != nil {
		return nil, err
	}
	password, _ := own.User.Password()
	connect := func(user *url.Userinfo) error {
		u := *own
		u.User = user
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		conn, err := pgx.Connect(cctx, u.String())
		if err == nil {
			_ = conn.Close(ctx)
		}
		return err
	}
	try("connect as the superuser without a password", connect(url.User(superuser)))
	try("connect as the superuser with its own password", connect(url.UserPassword(superuser, password)))
	sibling, err := siblingRole(ctx, own.String())
	if err != nil {
		return nil, err
	}
	try("connect as another plugin's role without a password", connect(url.User(sibling)))
	try("connect as another plugin's role with its own password", connect(url.UserPassword(sibling, password)))

	// What it must still be able to do.
	try("control: write in its own folder", writeFile(os.TempDir()))
	try("control: read its own /proc entry", readFile("/proc/self/status"))
	try("control: read the system's configuration", readFile("/etc/passwd"))
	// Go sizes a listener's backlog from this file; unread, it falls back
	// to 128 and a burst of fast-lane connections is refused (EAGAIN).
	try("control: read the kernel's listen backlog limit", readFile("/proc/sys/net/core/somaxconn"))
	try("control: connect as its own role", connect(own.User))
	return out, nil
}

// sameSession is nil when this process is in the gateway's session (and so
// has the gateway's controlling terminal, if any).
func sameSession(gateway int) error {
	mine, err := unix.Getsid(0)
	if err != nil {
		return err
	}
	theirs, err := unix.Getsid(gateway)
	if err != nil {
		return err
	}
	if mine != theirs {
		return fmt.Errorf("session %d, the gateway's is %d", mine, theirs)
	}
	return nil
}

// siblingRole is another plugin's database role: the catalog is readable
// by every role, as it would be to a hostile plugin.
func siblingRole(ctx context.Context, dbURL string) (string, error) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return "", err
	}
	defer conn.Close(context.Background())
	var role string
	err = conn.QueryRow(ctx, `SELECT rolname FROM pg_roles WHERE rolname LIKE 'svc_plugin_%' AND rolname <> current_user ORDER BY rolname LIMIT 1`).Scan(&role)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", errors.New("escape: no other plugin's role to try")
	}
	return role, err
}

// readMemFile reads a page of another process's memory through /proc: the
// first mapping's first bytes.
func readMemFile(path string) error {
	f, err := os.Open(path) // the kernel checks the right to trace here
	if err != nil {
		return err
	}
	defer f.Close()
	maps, err := os.ReadFile(filepath.Join(filepath.Dir(path), "maps"))
	if err != nil {
		return err
	}
	var start uint64
	if _, err := fmt.Sscanf(string(maps), "%x-", &start); err != nil {
		return fmt.Errorf("maps: %w", err)
	}
	_, err = f.ReadAt(make([]byte, 16), int64(start))
	return err
}

// readRemote reads 16 bytes at the usual start of a static Go binary's
// code in pid. EFAULT would mean the kernel let the call through to an
// unmapped address: that counts as allowed.
func readRemote(pid int) error {
	buf := make([]byte, 16)
	local := []unix.Iovec{{Base: &buf[0], Len: uint64(len(buf))}}
	remote := []unix.RemoteIovec{{Base: 0x400000, Len: len(buf)}}
	_, err := unix.ProcessVMReadv(pid, local, remote, 0)
	if errors.Is(err, unix.EFAULT) {
		return nil
	}
	return err
}

// traceProcess attaches to pid with ptrace and detaches at once.
func traceProcess(pid int) error {
	// A tracer is a thread: attach, wait and detach from the same one.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.PtraceAttach(pid); err != nil {
		return err
	}
	var status unix.WaitStatus
	_, _ = unix.Wait4(pid, &status, unix.WALL, nil)
	return unix.PtraceDetach(pid)
}
