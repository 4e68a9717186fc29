package version

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	platformv1 "github.com/svcplatform/svc/gen/svc/platform/v1"
)

// Current is the major version served today; it is also the default.
const Current = "v1"

// Header names the version a versioned response was served under.
const Header = "Svc-Api-Version"

//go:embed changelog.json
var changelogJSON []byte

// Entry is one release in the change history.
type Entry struct {
	Version string `json:"version"`
	Date    string `json:"date"`
	Kind    string `json:"kind"`
	Summary string `json:"summary"`
}

var changelog = mustParse(changelogJSON)

func mustParse(b []byte) []Entry {
	var entries []Entry
	if err := json.Unmarshal(b, &entries); err != nil {
		panic(fmt.Sprintf("version: changelog.json is invalid: %v", err))
	}
	return entries
}

// Changelog returns the change history, oldest first. Callers must not
// modify it.
func Changelog() []Entry { return changelog }

// ChangelogProto returns the change history as the public API message.
func ChangelogProto() *platformv1.GetChangelogResponse {
	out := &platformv1.GetChangelogResponse{Data: make([]*platformv1.ChangelogEntry, len(changelog))}
	for i, e := range changelog {
		out.Data[i] = &platformv1.ChangelogEntry{Version: e.Version, Date: e.Date, Kind: e.Kind, Summary: e.Summary}
	}
	return out
}

// Major reports the major version named by an /api/vN/... path: ok is false
// for paths that carry no version (such as /api/oauth/token).
func Major(path string) (major string, ok bool) {
	rest, found := strings.CutPrefix(path, "/api/")
	if !found {
		return "", false
	}
	seg, _, _ := strings.Cut(rest, "/")
	if len(seg) < 2 || seg[0] != 'v' {
		return "", false
	}
	for _, c := range seg[1:] {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	return seg, true
}

// Supported reports whether the gateway serves the major version.
func Supported(major string) bool { return major == Current }
