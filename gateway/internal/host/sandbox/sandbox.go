// Package sandbox contains a plugin process: what it may read, write,
// signal and trace, and which user it runs as.
//
// A plugin is started through a short trampoline: the gateway's own binary,
// re-executed under the name [trampolineName]. The trampoline runs before
// any plugin code, on one locked thread, and does what Go's fork and exec
// cannot: it opens the plugin binary (as the gateway, so the binary need not
// be reachable by the plugin's user), checks its pinned digest on the very
// file it will execute, builds a Landlock ruleset, drops to the plugin's
// user, sets no_new_privs, restricts itself and executes the plugin from the
// open file. Every step that fails stops the start: a plugin never runs with
// less containment than the gateway reports for it.
//
// What each [Level] gives a plugin process:
//
//   - [UID] (the gateway runs as root): its own unprivileged user and group
//     from a dynamic range, no supplementary groups, plus everything of
//     [Sandboxed]. Another user cannot read the gateway's files (its data
//     folder is the gateway's, mode 0700 or 0711) nor another process's
//     environment or memory.
//   - [Sandboxed] (Landlock available): no_new_privs, and a Landlock domain
//     of its own: read and execute the system's code and configuration
//     (/usr, /lib*, /bin, /sbin, /etc), read its own /proc entry and the
//     kernel's listen backlog limit (Go sizes listeners from it), read and
//     write the null and random devices, and write only inside its private
//     folder. Landlock also denies tracing a process outside the domain (its
//     siblings, the gateway: no /proc/<pid>/environ or mem, no
//     process_vm_readv) and, from ABI 6, signals and abstract unix sockets
//     outside it.
//   - [None]: neither is available (not Linux, no Landlock and not root).
//
// The gateway itself is made non-dumpable ([Harden]) so that even a
// process of its own user cannot read its environment or memory.
package sandbox

import "os"

// Level says how a plugin process is contained. Its values are what
// GET /api/admin/plugins shows as `isolation`.
type Level string

const (
	// UID: its own unprivileged user, plus the Landlock sandbox.
	UID Level = "uid"
	// Sandboxed: the gateway's user, in a Landlock sandbox with no_new_privs.
	Sandboxed Level = "sandbox"
	// None: the gateway's user, uncontained.
	None Level = "none"
)

// Spec is one plugin process's containment.
type Spec struct {
	// Binary is the plugin's executable.
	Binary string
	// Dir is the process's private folder (sockets, temporary files): the
	// only place it may write. At UID the caller gives it to UID and GID.
	Dir string
	// Level is what to apply; the trampoline refuses to start the plugin
	// if it cannot apply all of it.
	Level Level
	// UID and GID are the plugin's user at level UID.
	UID, GID int
	// SHA256 optionally pins the binary's hex digest: the trampoline hashes
	// the file it opened and executes that same file, so the binary cannot
	// be swapped between the check and the exec.
	SHA256 string
}

// trampolineName is the argv[0] under which the gateway's binary acts as
// the trampoline instead of starting normally.
const trampolineName = "svc-plugin-sandbox"

// ExitPinMismatch is the trampoline's exit status when the binary's digest
// is not the pinned one; ExitSetup when containment could not be applied.
const (
	ExitPinMismatch = 120
	ExitSetup       = 121
)

// PinMismatchMessage starts the line the trampoline writes to stderr when
// the binary's digest is not the pinned one.
const PinMismatchMessage = "svc-plugin-sandbox: checksum mismatch"

func init() {
	if len(os.Args) > 0 && os.Args[0] == trampolineName {
		trampoline(os.Args[1:])
	}
}
