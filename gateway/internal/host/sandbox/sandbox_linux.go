//go:build linux

package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"os/exec"
	"os/user"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Available is the strongest level this process can give the plugins it
// starts: UID as root, Sandboxed where the kernel has Landlock, else None.
func Available() Level {
	switch {
	case os.Geteuid() == 0:
		return UID
	case landlockABI() > 0:
		return Sandboxed
	}
	return None
}

// Harden makes the calling process non-dumpable: its /proc entries
// (environ, mem, fd) are then closed to every process without
// CAP_SYS_PTRACE, its own user's included, and it cannot be traced.
func Harden() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: make the gateway non-dumpable: %w", err)
	}
	return nil
}

// Command is the command that starts spec.Binary contained as spec says.
// The caller adds the environment; the process gets SIGKILL when the
// thread that started it dies (the SDK also watches its parent).
func Command(spec Spec) (*exec.Cmd, error) {
	if spec.Level == None {
		cmd := exec.Command(spec.Binary)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		return cmd, nil
	}
	if spec.Level == UID && os.Geteuid() != 0 {
		return nil, fmt.Errorf("sandbox: a plugin's own user needs the gateway to run as root")
	}
	if spec.Level == Sandboxed && landlockABI() == 0 {
		return nil, fmt.Errorf("sandbox: this kernel has no Landlock")
	}
	sum := spec.SHA256
	if sum == "" {
		sum = "-"
	}
	cmd := &exec.Cmd{
		// The gateway's own binary, as it was when it started (the link
		// names the running image even if the file was replaced since).
		Path: "/proc/self/exe",
		Args: []string{trampolineName, spec.Binary, spec.Dir, string(spec.Level),
			strconv.Itoa(spec.UID), strconv.Itoa(spec.GID), sum},
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	}
	return cmd, nil
}

// First and last id of the range plugin users are taken from: systemd's
// range for dynamic users, which no distribution assigns to accounts.
const (
	firstUID = 61184
	lastUID  = 65519
)

// UIDFor picks plugin name's user id for the installation named instance
// (its data folder): the same on every start, different between plugins
// and, most likely, between installations on one machine. An id that
// belongs to an account of the machine, or for which taken says true (an
// id this gateway gave another plugin), is skipped.
func UIDFor(instance, name string, taken func(int) bool) (int, error) {
	h := fnv.New32a()
	_, _ = io.WriteString(h, instance+"\x00"+name)
	span := lastUID - firstUID + 1
	start := int(h.Sum32() % uint32(span))
	for i := range span {
		uid := firstUID + (start+i)%span
		if taken != nil && taken(uid) {
			continue
		}
		if _, err := user.LookupId(strconv.Itoa(uid)); err == nil {
			continue
		}
		// A live systemd DynamicUser= service: not in /etc/passwd, but
		// registered here.
		if _, err := os.Lstat("/run/systemd/dynamic-uid/" + strconv.Itoa(uid)); err == nil {
			continue
		}
		if _, err := user.LookupGroupId(strconv.Itoa(uid)); err == nil {
			continue
		}
		return uid, nil
	}
	return 0, fmt.Errorf("sandbox: no free user id left in %d–%d", firstUID, lastUID)
}

// landlockABI is the kernel's Landlock ABI version, 0 without Landlock.
func landlockABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// trampoline contains this process as args say and executes the plugin in
// its place; it returns only by exiting.
func trampoline(args []string) {
	runtime.LockOSThread() // every step below is per thread, the exec included
	if err := contain(args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if _, ok := err.(pinMismatch); ok {
			os.Exit(ExitPinMismatch)
		}
		os.Exit(ExitSetup)
	}
}

type pinMismatch struct{ got, want string }

func (p pinMismatch) Error() string {
	return fmt.Sprintf("%s: the binary's sha256 is %s, the pin is %s", PinMismatchMessage, p.got, p.want)
}

func contain(args []string) error {
	if len(args) != 6 {
		return fmt.Errorf("svc-plugin-sandbox: want 6 arguments, got %d", len(args))
	}
	binary, dir, level, pin := args[0], args[1], Level(args[2]), args[5]
	uid, err1 := strconv.Atoi(args[3])
	gid, err2 := strconv.Atoi(args[4])
	if err1 != nil || err2 != nil || (level != UID && level != Sandboxed) {
		return fmt.Errorf("svc-plugin-sandbox: bad arguments %q", args)
	}
	parent := os.Getppid()

	// Cut the plugin off the gateway's terminal: a session of its own has
	// no controlling terminal, and its standard input is /dev/null, so it
	// can neither read what the operator types nor push input into the
	// operator's shell (TIOCSTI). Its working folder is its own.
	null, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("svc-plugin-sandbox: open /dev/null: %w", err)
	}
	if err := unix.Dup3(null, 0, 0); err != nil {
		return fmt.Errorf("svc-plugin-sandbox: standard input: %w", err)
	}
	_ = unix.Close(null)
	if _, err := unix.Setsid(); err != nil {
		return fmt.Errorf("svc-plugin-sandbox: setsid: %w", err)
	}
	if err := unix.Chdir(dir); err != nil {
		return fmt.Errorf("svc-plugin-sandbox: chdir %s: %w", dir, err)
	}

	// Opened as the gateway: the plugin's user need not reach the file,
	// and what is hashed is what runs.
	fd, err := unix.Open(binary, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("svc-plugin-sandbox: open %s: %w", binary, err)
	}
	if pin != "-" {
		h := sha256.New()
		if _, err := io.Copy(h, io.NewSectionReader(fdReader(fd), 0, 1<<62)); err != nil {
			return fmt.Errorf("svc-plugin-sandbox: read %s: %w", binary, err)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != pin {
			return pinMismatch{got: got, want: pin}
		}
	}

	// A script is run by its interpreter through /dev/fd/<fd>, which a
	// close-on-exec descriptor would no longer name.
	var magic [2]byte
	if n, _ := unix.Pread(fd, magic[:], 0); n == 2 && string(magic[:]) == "#!" {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
			return fmt.Errorf("svc-plugin-sandbox: %s: %w", binary, err)
		}
	}

	abi := landlockABI()
	ruleset := -1
	if abi > 0 {
		if ruleset, err = buildRuleset(abi, fd, dir); err != nil {
			return err
		}
	} else if level == Sandboxed {
		return fmt.Errorf("svc-plugin-sandbox: this kernel has no Landlock")
	}

	if level == UID {
		// Raw calls change this thread alone, which is the one that execs.
		if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, 0, 0, 0); e != 0 {
			return fmt.Errorf("svc-plugin-sandbox: setgroups: %w", e)
		}
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, uintptr(gid), uintptr(gid), uintptr(gid)); e != 0 {
			return fmt.Errorf("svc-plugin-sandbox: setresgid %d: %w", gid, e)
		}
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, uintptr(uid), uintptr(uid), uintptr(uid)); e != 0 {
			return fmt.Errorf("svc-plugin-sandbox: setresuid %d: %w", uid, e)
		}
	}
	if _, _, e := unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0); e != 0 {
		return fmt.Errorf("svc-plugin-sandbox: no_new_privs: %w", e)
	}
	if ruleset >= 0 {
		if _, _, e := unix.RawSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0); e != 0 {
			return fmt.Errorf("svc-plugin-sandbox: landlock_restrict_self: %w", e)
		}
		_ = unix.Close(ruleset)
	}
	if err := denySyscalls(abi, level); err != nil {
		return err
	}
	// A change of user clears the parent-death signal: set it again, and
	// leave if the gateway is already gone.
	if _, _, e := unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0, 0); e != 0 {
		return fmt.Errorf("svc-plugin-sandbox: pdeathsig: %w", e)
	}
	if os.Getppid() != parent {
		return fmt.Errorf("svc-plugin-sandbox: the gateway exited")
	}

	argv, err := syscall.SlicePtrFromStrings([]string{binary})
	if err != nil {
		return err
	}
	envv, err := syscall.SlicePtrFromStrings(os.Environ())
	if err != nil {
		return err
	}
	empty, _ := syscall.BytePtrFromString("")
	_, _, e := unix.RawSyscall6(unix.SYS_EXECVEAT, uintptr(fd), uintptr(unsafe.Pointer(empty)),
		uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&envv[0])), unix.AT_EMPTY_PATH, 0)
	return fmt.Errorf("svc-plugin-sandbox: exec %s: %w", binary, e)
}

// fdReader reads a file descriptor at offsets, leaving it open.
type fdReader int

func (f fdReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := unix.Pread(int(f), p, off)
	if err != nil {
		return 0, err
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// Landlock's filesystem rights by the ABI that introduced them.
const (
	fsRightsABI1 = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
		unix.LANDLOCK_ACCESS_FS_MAKE_REG | unix.LANDLOCK_ACCESS_FS_MAKE_SOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	readCode  = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	readTree  = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	readWrite = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE
)

// handledFS is every filesystem right the kernel's ABI knows: what is not
// granted below is denied.
func handledFS(abi int) uint64 {
	rights := uint64(fsRightsABI1)
	if abi >= 2 {
		rights |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		rights |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		rights |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return rights
}

// buildRuleset is the plugin's Landlock ruleset: the system's code and
// configuration to read, its own /proc entry, a few devices, its binary,
// and its private folder to use freely. TCP is not restricted (plugins call
// upstream services and the database); signals and abstract unix sockets
// are confined to the domain where the kernel can (ABI 6).
func buildRuleset(abi, binary int, dir string) (int, error) {
	handled := handledFS(abi)
	attr := unix.LandlockRulesetAttr{Access_fs: handled}
	size := unsafe.Sizeof(attr.Access_fs)
	if abi >= 6 {
		attr.Scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
		size = unsafe.Sizeof(attr)
	}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if e != 0 {
		return -1, fmt.Errorf("svc-plugin-sandbox: landlock_create_ruleset: %w", e)
	}
	ruleset := int(fd)
	type rule struct {
		path     string
		access   uint64
		optional bool
	}
	rules := []rule{
		{"/usr", readCode, true}, {"/lib", readCode, true}, {"/lib32", readCode, true},
		{"/lib64", readCode, true}, {"/libx32", readCode, true}, {"/bin", readCode, true},
		{"/sbin", readCode, true}, {"/etc", readTree, true},
		// /proc/self resolves now to this process's entry, which stays
		// the plugin's: exec keeps the pid.
		{"/proc/self", readTree, false},
		// Go sizes every listener's backlog from this file; unread, the
		// plugin's listeners fall back to 128 and a burst of fast-lane
		// connections beyond that is refused.
		{"/proc/sys/net/core/somaxconn", readTree, true},
		{"/dev/null", readWrite, false}, {"/dev/zero", readWrite, true},
		{"/dev/random", readWrite, true}, {"/dev/urandom", readWrite, true},
		{dir, handled, false},
	}
	for _, r := range rules {
		pfd, err := unix.Open(r.path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			if r.optional {
				continue
			}
			return -1, fmt.Errorf("svc-plugin-sandbox: open %s: %w", r.path, err)
		}
		err = addRule(ruleset, pfd, r.access)
		_ = unix.Close(pfd)
		if err != nil {
			return -1, fmt.Errorf("svc-plugin-sandbox: allow %s: %w", r.path, err)
		}
	}
	if err := addRule(ruleset, binary, unix.LANDLOCK_ACCESS_FS_EXECUTE|unix.LANDLOCK_ACCESS_FS_READ_FILE); err != nil {
		return -1, fmt.Errorf("svc-plugin-sandbox: allow the binary: %w", err)
	}
	return ruleset, nil
}

// fileRights are the rights Landlock accepts on a rule for a file rather
// than a folder.
const fileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
	unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

func addRule(ruleset, fd int, access uint64) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fileRights
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	_, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
