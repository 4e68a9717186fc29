package host

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestAPluginGetsAScrubbedEnvironment: a plugin never sees the gateway's
// secrets or configuration, only what a process needs, the variables named
// for it and what the gateway hands it.
func TestAPluginGetsAScrubbedEnvironment(t *testing.T) {
	t.Parallel()
	h := New(Options{Dir: t.TempDir(), Env: func(plugin string) ([]string, error) {
		return []string{"SVC_DATABASE_URL=postgres://" + plugin + "@/db"}, nil
	}})
	parent := []string{
		"PATH=/usr/bin", "HOME=/root", "LC_CTYPE=C.UTF-8",
		"SVC_MASTER_KEY=c2VjcmV0", "SVC_ADMIN_TOKEN=svc_admin_x", "SVC_DATABASE_URL=postgres://postgres@/svc",
		"OPENAI_KEY=sk-upstream", "AWS_SECRET_ACCESS_KEY=x", "SVC_HELLO_GREETING=Hi",
		"SVC_HELLOWORLD_X=not-hello's", "PLUGIN_PROTOCOL_VERSIONS=9",
	}
	env, err := h.pluginEnvFrom(parent, "hello", "/run/x")
	if err != nil {
		t.Fatal(err)
	}
	has := func(kv string) bool { return slices.Contains(env, kv) }
	for _, leak := range []string{"SVC_MASTER_KEY=", "SVC_ADMIN_TOKEN=", "OPENAI_KEY=", "AWS_SECRET_ACCESS_KEY=", "SVC_HELLOWORLD_X=", "PLUGIN_PROTOCOL_VERSIONS=", "SVC_DATABASE_URL=postgres://postgres@"} {
		for _, kv := range env {
			if strings.HasPrefix(kv, leak) {
				t.Errorf("the plugin sees %s", kv)
			}
		}
	}
	// Its private folder is its home and temporary folder: the gateway's
	// own (HOME=/root) are none of its business.
	for _, want := range []string{"PATH=/usr/bin", "HOME=/run/x", "TMPDIR=/run/x", "LC_CTYPE=C.UTF-8", "SVC_HELLO_GREETING=Hi", "SVC_DATABASE_URL=postgres://hello@/db"} {
		if !has(want) {
			t.Errorf("the plugin lacks %s; env %v", want, env)
		}
	}
}

func TestOnlyBinariesTheGatewaysUserControlsAreLaunched(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		mode os.FileMode
		uid  int // the gateway's euid, as the test pretends
		ok   bool
	}{
		{"a binary of the gateway's user, 0755, is launched", 0o755, os.Geteuid(), true},
		{"a binary writable by others is refused", 0o757, os.Geteuid(), false},
		{"a binary writable by its group is refused", 0o775, os.Geteuid(), false},
		{"a binary owned by another user is refused", 0o755, os.Geteuid() + 4242, os.Geteuid() == 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
			if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tc.mode); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			err = checkOwnership(path, fi, tc.uid)
			if (err == nil) != tc.ok {
				t.Fatalf("checkOwnership = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// TestAPluginsProfilesReachThePathsTheOperatorAskedOnceItStops: a
// contained plugin may write only in its private folder, so the profiles
// asked with SVC_<NAME>_CPUPROFILE and _MEMPROFILE are written there and
// copied out by the host when the process stops, before the folder goes.
func TestAPluginsProfilesReachThePathsTheOperatorAskedOnceItStops(t *testing.T) {
	out := t.TempDir()
	cpu, mem := filepath.Join(out, "testplugin.cpu.pprof"), filepath.Join(out, "testplugin.mem.pprof")
	b := setup(t, map[string]map[string]string{"testplugin": nil}, func(o *Options) {
		o.Env = func(string) ([]string, error) {
			return []string{"SVC_TESTPLUGIN_CPUPROFILE=" + cpu, "SVC_TESTPLUGIN_MEMPROFILE=" + mem}, nil
		}
	})
	if _, err := b.echo(context.Background(), "testplugin", "profiled"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{cpu, mem} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("the profile was not saved: %v", err)
			continue
		}
		// A profile is gzip-compressed protobuf.
		if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("%s is not a profile (%d bytes)", path, len(b))
		}
	}
}
