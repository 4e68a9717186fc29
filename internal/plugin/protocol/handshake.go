package protocol

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Version is the plugin protocol version this code speaks. The plugin
// states it in its handshake line and the gateway repeats it in
// DescribeRequest; either side refuses another. Version 1 was
// hashicorp/go-plugin's handshake and gRPC; version 2 is the handshake line
// and the fast lane's framing for everything.
const Version = 2

// The magic cookie is not a secret: it only stops a plugin binary from
// running when a person starts it by hand.
const (
	EnvMagicCookie = "SVC_PLUGIN_MAGIC_COOKIE"
	MagicCookie    = "5f1c0e7a9b2d4c3e8a6f1b0d7c9e2a4b"
)

// Environment variables the gateway sets for a plugin process.
const (
	// EnvFastLaneDir names the private folder (mode 0700, created by the
	// gateway) where the plugin listens for the gateway's calls
	// (FastLaneSocket) and finds the Host service (HostSocket).
	EnvFastLaneDir = "SVC_PLUGIN_FAST_LANE_DIR"
	// EnvStopFD names the file descriptor of a pipe the gateway holds open
	// for as long as the plugin is to run: its end (the gateway closing it,
	// or dying) asks the plugin to stop.
	EnvStopFD = "SVC_PLUGIN_STOP_FD"
)

// FastLaneSocket is the file name of the fast-lane socket inside the folder
// named by EnvFastLaneDir.
const FastLaneSocket = "lane.sock"

// handshakeTag starts the one line a plugin writes on its stdout once its
// lane listens: "svc-plugin|<version>|<lane socket path>".
const handshakeTag = "svc-plugin"

// HandshakeLine is the line (without its newline) a plugin whose lane
// listens on lanePath writes on its stdout.
func HandshakeLine(lanePath string) string {
	return handshakeTag + "|" + strconv.Itoa(Version) + "|" + lanePath
}

// ErrNotHandshake is a line that is not a plugin handshake (the plugin
// printed something else on stdout first).
var ErrNotHandshake = errors.New("not a plugin handshake")

// VersionError is the handshake of another protocol version.
type VersionError struct {
	// Version is the version the plugin speaks, as it wrote it.
	Version string
	// GoPlugin: the handshake is hashicorp/go-plugin's (version 1).
	GoPlugin bool
}

func (e *VersionError) Error() string {
	if e.GoPlugin {
		return fmt.Sprintf("the plugin speaks plugin protocol version %s (hashicorp/go-plugin's handshake); this code speaks version %d", e.Version, Version)
	}
	return fmt.Sprintf("the plugin speaks plugin protocol version %s; this code speaks version %d", e.Version, Version)
}

// goPluginLine is go-plugin's handshake: core version, app version,
// network, address, protocol[, certificate].
var goPluginLine = regexp.MustCompile(`^1\|(\d+)\|(unix|tcp)\|`)

// ParseHandshake reads a plugin's handshake line: the lane socket's path,
// or why the line is refused (ErrNotHandshake, or a *VersionError).
func ParseHandshake(line string) (lanePath string, err error) {
	line = strings.TrimRight(line, "\r\n")
	if m := goPluginLine.FindStringSubmatch(line); m != nil {
		return "", &VersionError{Version: m[1], GoPlugin: true}
	}
	parts := strings.SplitN(line, "|", 3)
	if len(parts) != 3 || parts[0] != handshakeTag {
		return "", ErrNotHandshake
	}
	if parts[1] != strconv.Itoa(Version) {
		return "", &VersionError{Version: parts[1]}
	}
	if parts[2] == "" {
		return "", fmt.Errorf("%w: it names no lane socket", ErrNotHandshake)
	}
	return parts[2], nil
}
