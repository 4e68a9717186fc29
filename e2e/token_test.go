package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/svcplatform/svc/internal/gatewaytest"
)

// gatewayCommand runs bin/gateway with args and answers its stdout, its
// stderr and whether it succeeded.
func gatewayCommand(t *testing.T, dir string, env []string, args ...string) (string, string, bool) {
	t.Helper()
	cmd := exec.Command(filepath.Join(gatewaytest.BinDir(t), "gateway"), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("gateway %s: %v", strings.Join(args, " "), err)
	}
	return stdout.String(), stderr.String(), err == nil
}

// `gateway token` (CONTRACT §20): a user access token of a development-mode
// app without a browser, printed by the built binary beside a running
// gateway's data folder (whose lock it does not take), that works on the
// Graph; refused for a user off the app's team, an unknown scope and a
// live app.
func TestGatewayTokenPrintsAUserTokenOfADevelopmentAppWithoutABrowser(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	// The cluster may run as an unprivileged user: let it into the folder.
	for _, dir := range []string{filepath.Dir(dataDir), dataDir} {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	g := gatewaytest.Start(t, gatewaytest.Options{Embedded: true, DataDir: dataDir})
	c := g.Credentials(t)
	w := &graphWorld{g: g, c: c}
	elsewhere := t.TempDir() // run from another folder: --data-dir names the installation
	token := func(user string, scopes string) (string, string, bool) {
		return gatewayCommand(t, elsewhere, nil, "token", "--data-dir", dataDir, "--user", c.Users[user].Username,
			"--app", c.App.ID, "--scopes", scopes)
	}

	out, errOut, ok := token("owner", "public_profile,pages:read")
	tok := strings.TrimSpace(out)
	if !ok || !strings.HasPrefix(tok, "svcat_") || strings.Contains(tok, "\n") {
		t.Fatalf("gateway token: ok=%v stdout=%q stderr=%s", ok, out, errOut)
	}
	res, body := w.get(t, tok, url.Values{"node": {"me"}})
	var me struct{ ID string }
	if res.StatusCode != 200 || json.Unmarshal(body, &me) != nil || me.ID != c.Users["owner"].ID {
		t.Fatalf("the printed token on the Graph: %d %s", res.StatusCode, body)
	}
	res, body = w.get(t, tok, url.Values{"node": {"me/pages"}})
	if res.StatusCode != 200 || !strings.Contains(string(body), c.Page.ID) {
		t.Fatalf("the token's pages:read: %d %s", res.StatusCode, body)
	}
	// A Test User may authorize the app in development mode too.
	if _, errOut, ok := token("consumer", "public_profile"); !ok {
		t.Fatalf("a Test User's token refused: %s", errOut)
	}

	refused := func(what, wantInMessage string, out, errOut string, ok bool) {
		t.Helper()
		if ok || strings.TrimSpace(out) != "" {
			t.Fatalf("%s: not refused: stdout=%q", what, out)
		}
		if !strings.Contains(errOut, wantInMessage) {
			t.Fatalf("%s: message %q does not say %q", what, errOut, wantInMessage)
		}
	}
	out, errOut, ok = token("staff", "public_profile")
	refused("a user off the team", "nor one of its Test Users", out, errOut, ok)
	out, errOut, ok = token("owner", "public_profile pages:everything")
	refused("an unknown scope", `unknown scope "pages:everything"`, out, errOut, ok)

	// The app goes live (directly in its database: App Review is not what
	// is tested here): no token without the user's consent any more.
	dbURL, errOut, ok := gatewayCommand(t, elsewhere, nil, "database-url", "--data-dir", dataDir)
	if !ok {
		t.Fatalf("database-url: %s", errOut)
	}
	conn, err := pgx.Connect(context.Background(), strings.TrimSpace(dbURL))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `UPDATE core.apps SET mode = 'live' WHERE id = $1`, c.App.ID); err != nil {
		t.Fatal(err)
	}
	out, errOut, ok = token("owner", "public_profile")
	refused("a live app", "is live", out, errOut, ok)
}

// Run from a folder that is not the installation's, `database-url` and
// `token` say which folder they looked in and name --data-dir, and leave
// nothing behind (issue 28).
func TestACommandRunFromAnotherFolderNamesTheFolderAndDataDir(t *testing.T) {
	t.Parallel()
	elsewhere := t.TempDir()
	for _, args := range [][]string{{"database-url"}, {"token", "--user", "owner", "--app", "1"}} {
		out, errOut, ok := gatewayCommand(t, elsewhere, []string{"SVC_MASTER_KEY=", "SVC_DATABASE_URL="}, args...)
		if ok || out != "" {
			t.Fatalf("%v: not refused: %q", args, out)
		}
		if !strings.Contains(errOut, filepath.Join(elsewhere, "var")) || !strings.Contains(errOut, "--data-dir") {
			t.Fatalf("%v: the advice names neither the folder nor --data-dir: %s", args, errOut)
		}
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Fatalf("the commands left %v behind", entries)
	}
}
