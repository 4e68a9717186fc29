//go:build !linux

package sandbox

import (
	"errors"
	"os"
	"os/exec"
)

// Available is None where containment is not implemented.
func Available() Level { return None }

// Harden does nothing here.
func Harden() error { return nil }

// Command starts spec.Binary as is; only None is possible.
func Command(spec Spec) (*exec.Cmd, error) {
	if spec.Level != None {
		return nil, errors.New("sandbox: plugin containment needs Linux")
	}
	return exec.Command(spec.Binary), nil
}

// UIDFor is not used where UID is unavailable.
func UIDFor(instance, name string, taken func(int) bool) (int, error) {
	return 0, errors.New("sandbox: plugin users need Linux")
}

func trampoline([]string) {
	os.Stderr.WriteString("svc-plugin-sandbox: plugin containment needs Linux\n")
	os.Exit(ExitSetup)
}
