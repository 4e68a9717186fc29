package version

import (
	"testing"
)

func TestMajorReadsOnlyTheVersionSegment(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"/api/v1/graph":               "v1",
		"/api/v2/graph":               "v2",
		"/api/v0":                     "v0",
		"/api/v10/platform/changelog": "v10",
		"/api/oauth/token":            "",
		"/api/mobile/chat":            "",
		"/api/v":                      "",
		"/api/v1beta/graph":           "",
		"/v1/chat/completions":        "",
		"/apiv1/graph":                "",
	}
	for path, want := range cases {
		got, ok := Major(path)
		if got != want || ok != (want != "") {
			t.Errorf("Major(%q) = %q, %v; want %q", path, got, ok, want)
		}
	}
	if !Supported("v1") || Supported("v2") || Supported("v01") {
		t.Fatal("only v1 is served")
	}
}

func TestChangelogHoldsTheInterfacesHistoryThenOurs(t *testing.T) {
	t.Parallel()
	log := Changelog()
	if log[0].Version != "1.0.0" || log[0].Date != "2026-08-01" || log[0].Kind != "major" {
		t.Fatalf("first entry = %+v", log[0])
	}
	seen := map[string]bool{}
	for _, e := range log {
		if e.Version == "" || e.Date == "" || e.Kind == "" || e.Summary == "" {
			t.Fatalf("incomplete entry %+v", e)
		}
		if seen[e.Version] {
			t.Fatalf("version %s listed twice", e.Version)
		}
		seen[e.Version] = true
	}
	for _, v := range []string{"1.13.0", "1.14.0", "1.15.0", "1.16.0 - 1.38.0"} {
		if !seen[v] {
			t.Errorf("interface version %s missing", v)
		}
	}
	if got := len(ChangelogProto().GetData()); got != len(log) {
		t.Fatalf("proto form has %d entries, want %d", got, len(log))
	}
}
