package pgembed

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// testTimeout bounds every start, stop and query in these tests.
const testTimeout = 90 * time.Second

func TestStartServesOnPrivateSocketOnly(t *testing.T) {
	t.Parallel()
	dir := clusterDir(t)
	c := start(t, Options{Dir: dir, Fast: true})

	settings := map[string]string{
		"listen_addresses":        "",
		"unix_socket_directories": `"` + c.layout.socketDir + `"`,
		"port":                    strconv.Itoa(Port),
		"server_encoding":         "UTF8",
		"lc_collate":              "C",
		"fsync":                   "off",
		"synchronous_commit":      "off",
		"full_page_writes":        "off",
	}
	// Under root, plugins (users of their own) reach the socket but must
	// not pass through the data folder: the socket lives outside it.
	if want := filepath.Join(dir, "run"); os.Geteuid() == 0 {
		want = "/tmp/svc-pg-"
		if !strings.HasPrefix(c.layout.socketDir, want) {
			t.Errorf("under root the socket folder is %s, want one under /tmp", c.layout.socketDir)
		}
	} else if c.layout.socketDir != want {
		t.Errorf("socket folder = %s, want %s", c.layout.socketDir, want)
	}
	for name, want := range settings {
		if got := queryString(t, c.URL("postgres"), "SHOW "+name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if got := queryString(t, c.URL("postgres"), "SELECT current_user"); got != Superuser {
		t.Errorf("current_user = %q, want %q", got, Superuser)
	}

	ctx := testContext(t)
	if err := c.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if err := <-c.Wait(); err != nil {
		t.Fatalf("Wait after Stop = %v, want nil", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "postmaster.pid")); !os.IsNotExist(err) {
		t.Errorf("postmaster.pid still exists after Stop (err %v)", err)
	}
	if info, err := os.Stat(c.LogPath()); err != nil || info.Size() == 0 {
		t.Errorf("server log %s is missing or empty (err %v)", c.LogPath(), err)
	}
}

func TestRestartKeepsDataAndSkipsInitdb(t *testing.T) {
	t.Parallel()
	dir := clusterDir(t)
	c := start(t, Options{Dir: dir, Fast: true})
	exec1(t, c.URL("postgres"), "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('still here')")
	if err := c.Stop(testContext(t)); err != nil {
		t.Fatalf("Stop: %v", err)
	}

	// Fast is a per-start setting: the same cluster restarts with durable settings.
	c = start(t, Options{Dir: dir})
	if got := queryString(t, c.URL("postgres"), "SELECT v FROM kept"); got != "still here" {
		t.Errorf("row after restart = %q", got)
	}
	if got := queryString(t, c.URL("postgres"), "SHOW fsync"); got != "on" {
		t.Errorf("fsync without Fast = %q, want on", got)
	}
	log, err := os.ReadFile(c.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(log), "The files belonging to this database system"); n != 1 {
		t.Errorf("initdb ran %d times, want once", n)
	}
}

func TestStartRecoversAfterPostmasterKilled(t *testing.T) {
	t.Parallel()
	dir := clusterDir(t)
	c := start(t, Options{Dir: dir, Fast: true})
	// synchronous_commit on writes the WAL out before COMMIT returns, so the row survives
	// the crash even with fsync off.
	exec1(t, c.URL("postgres"), "SET synchronous_commit = on; CREATE TABLE crash (v int); INSERT INTO crash VALUES (42)")

	if err := syscall.Kill(c.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-c.Wait():
		if err == nil {
			t.Error("Wait after SIGKILL = nil, want an error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not report the killed server")
	}

	c2 := start(t, Options{Dir: dir, Fast: true})
	if got := queryString(t, c2.URL("postgres"), "SELECT v::text FROM crash"); got != "42" {
		t.Errorf("row after crash recovery = %q", got)
	}
}

func TestStartTakesOverARunningServer(t *testing.T) {
	t.Parallel()
	dir := clusterDir(t)
	c1 := start(t, Options{Dir: dir, Fast: true})
	c2 := start(t, Options{Dir: dir, Fast: true})

	select {
	case err := <-c1.Wait():
		if err == nil {
			t.Error("first cluster's Wait = nil, want an error saying it was taken over")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the first server is still running after the takeover")
	}
	// The old value must not disturb the new server.
	if err := c1.Stop(testContext(t)); err != nil {
		t.Errorf("Stop of the taken-over cluster: %v", err)
	}
	if got := queryString(t, c2.URL("postgres"), "SELECT 'ok'"); got != "ok" {
		t.Errorf("query on the new server = %q", got)
	}
}

func TestStartIgnoresLockFilesOfUnrelatedProcesses(t *testing.T) {
	t.Parallel()
	dir := clusterDir(t)
	c := start(t, Options{Dir: dir, Fast: true})
	if err := c.Stop(testContext(t)); err != nil {
		t.Fatal(err)
	}

	// A live process that is not PostgreSQL, as after a reboot that recycled the pid.
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })
	pid := strconv.Itoa(sleeper.Process.Pid)
	writeFile(t, filepath.Join(dir, "data", "postmaster.pid"), pid+"\n"+filepath.Join(dir, "data")+"\n1700000000\n5432\n\n\n 0 0\nready   \n")
	// The socket folder (under /tmp when running as root) goes with the server.
	if err := os.MkdirAll(c.layout.socketDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if a, err := lookupAccount(serverUsers[0]); err == nil && os.Geteuid() == 0 {
		if err := a.chown(c.layout.socketDir); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(c.layout.socketDir, socketFile+".lock"), pid+"\n"+filepath.Join(dir, "data")+"\n")

	c = start(t, Options{Dir: dir, Fast: true})
	if err := c.Stop(testContext(t)); err != nil {
		t.Fatal(err)
	}

	// An empty postmaster.pid, as left by a crash while it was written.
	writeFile(t, filepath.Join(dir, "data", "postmaster.pid"), "")
	start(t, Options{Dir: dir, Fast: true})
}

func TestStartFailureShowsWhy(t *testing.T) {
	t.Parallel()
	dir := clusterDir(t)
	c := start(t, Options{Dir: dir, Fast: true})
	if err := c.Stop(testContext(t)); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "data", "postgresql.conf")
	orig, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}

	writeFile(t, conf, string(orig)+"\nno_such_setting = 1\n")
	_, err = Start(testContext(t), Options{Dir: dir, Fast: true, Logger: testLogger(t)})
	if err == nil || !strings.Contains(err.Error(), `unrecognized configuration parameter "no_such_setting"`) {
		t.Fatalf("Start with a broken postgresql.conf = %v, want the server log's reason", err)
	}

	writeFile(t, conf, string(orig))
	writeFile(t, filepath.Join(dir, "data", "PG_VERSION"), "9.6\n")
	_, err = Start(testContext(t), Options{Dir: dir, Fast: true, Logger: testLogger(t)})
	if err == nil || !strings.Contains(err.Error(), "created by PostgreSQL 9.6") {
		t.Fatalf("Start over a cluster of another version = %v, want a version error", err)
	}
}

func TestServerStopsWhenParentIsKilled(t *testing.T) {
	t.Parallel()
	dir := clusterDir(t)
	helper := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	helper.Env = append(os.Environ(), "PGEMBED_HELPER_DIR="+dir)
	helper.Stderr = os.Stderr
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = helper.Process.Kill(); _ = helper.Wait() })

	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("helper did not report its server: %v", err)
	}
	pm, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("helper said %q", line)
	}
	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	if !waitUntil(context.Background(), 20*time.Second, func() bool { return !processAlive(pm) }) {
		t.Fatalf("postmaster %d still runs 20s after its parent was killed", pm)
	}

	c := start(t, Options{Dir: dir, Fast: true})
	if got := queryString(t, c.URL("postgres"), "SELECT 'back'"); got != "back" {
		t.Errorf("query after restart = %q", got)
	}
}

// TestHelperProcess is the "gateway" TestServerStopsWhenParentIsKilled kills: it starts a
// cluster, prints the postmaster's pid and waits to be killed.
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv("PGEMBED_HELPER_DIR")
	if dir == "" {
		t.Skip("runs only as a helper process")
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	c, err := Start(ctx, Options{Dir: dir, Fast: true, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println(c.PID())
	time.Sleep(time.Minute)
	os.Exit(3)
}

func TestDetachedServerIsStoppedByStopDir(t *testing.T) {
	t.Parallel()
	dir := clusterDir(t)
	c := start(t, Options{Dir: dir, Fast: true, Detach: true})
	pm := c.PID()
	ctx := testContext(t)
	if err := StopDir(ctx, Options{Dir: dir, Logger: testLogger(t)}); err != nil {
		t.Fatalf("StopDir: %v", err)
	}
	if processAlive(pm) {
		t.Fatalf("postmaster %d still runs after StopDir", pm)
	}
	if err := StopDir(ctx, Options{Dir: dir, Logger: testLogger(t)}); err != nil {
		t.Fatalf("StopDir with nothing running: %v", err)
	}
	if err := StopDir(ctx, Options{Dir: filepath.Join(dir, "never-created")}); err != nil {
		t.Fatalf("StopDir of a missing folder: %v", err)
	}
}

func TestDeepFolderGetsSocketUnderTmp(t *testing.T) {
	t.Parallel()
	dir := clusterDir(t)
	deep := filepath.Join(dir, strings.Repeat("d", 60), strings.Repeat("e", 40))
	c := start(t, Options{Dir: deep, Fast: true})
	if !strings.HasPrefix(c.layout.socketDir, "/tmp/svc-pg-") {
		t.Fatalf("socket folder = %s, want one under /tmp", c.layout.socketDir)
	}
	if got := queryString(t, c.URL("postgres"), "SELECT 'ok'"); got != "ok" {
		t.Errorf("query = %q", got)
	}
	if err := c.Stop(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.layout.socketDir); !os.IsNotExist(err) {
		t.Errorf("socket folder %s left behind (err %v)", c.layout.socketDir, err)
	}
}

// make run as root from a clone under /root (mode 0700) must work, and the
// cluster must live inside the folder given, so that a copy of the data
// folder holds the data and deleting it deletes the cluster: the server's
// account alone is let through the 0700 folder (an access-list entry), whose
// mode is unchanged and which other users still cannot enter.
func TestAClusterUnderAFolderTheServerCannotEnterStaysInsideIt(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the server runs as another user only when the tests run as root")
	}
	t.Parallel()
	parent := t.TempDir()
	if err := os.Chmod(parent, 0o700); err != nil { // like /root
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "pg")
	c, err := Start(testContext(t), Options{Dir: dir, Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("Start under a 0700 folder: %v", err)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("the cluster folder %s is not a folder (%v, %v): the cluster lives elsewhere", dir, fi.Mode(), err)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "PG_VERSION")); err != nil {
		t.Fatalf("the data is not inside the folder given: %v", err)
	}
	if info, err := os.Stat(parent); err != nil || info.Mode().Perm()&0o007 != 0 {
		t.Fatalf("the user's folder was opened to others: %v %v", info.Mode(), err)
	}
	stranger := &account{name: "nobody", uid: 65534, gid: 65534}
	if can, err := stranger.canTraverse(parent); err != nil || can {
		t.Fatalf("another user can pass through the 0700 folder (%v)", err)
	}
	exec1(t, c.URL("postgres"), "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('found again')")
	if err := c.Stop(testContext(t)); err != nil {
		t.Fatal(err)
	}
	c, err = Start(testContext(t), Options{Dir: dir, Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("second start: %v", err)
	}
	defer c.Stop(testContext(t))
	if got := queryString(t, c.URL("postgres"), "SELECT v FROM kept"); got != "found again" {
		t.Fatalf("after a restart the table holds %q", got)
	}
}

// A cluster an earlier version kept under relocateRoot, behind a link in a
// 0700 folder, is moved into that folder at its next start, with its data,
// and its old folder is removed.
func TestAClusterKeptOutsideItsFolderIsMovedIn(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the cluster was kept outside its folder only when running as root")
	}
	t.Parallel()
	parent := t.TempDir()
	if err := os.Chmod(parent, 0o700); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "pg")
	old := relocatedPath(dir)
	t.Cleanup(func() { _ = os.RemoveAll(old) })
	// The earlier layout: the cluster in relocateRoot, a link at dir.
	c, err := Start(testContext(t), Options{Dir: old, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	exec1(t, c.URL("postgres"), "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('moved in')")
	if err := c.Stop(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(old, dir); err != nil {
		t.Fatal(err)
	}

	c, err = Start(testContext(t), Options{Dir: dir, Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("start on the earlier layout: %v", err)
	}
	defer c.Stop(testContext(t))
	if got := queryString(t, c.URL("postgres"), "SELECT v FROM kept"); got != "moved in" {
		t.Fatalf("after the move the table holds %q", got)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("%s is still not a folder (%v): the cluster was not moved in", dir, err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Fatalf("the old folder %s is left behind (%v)", old, err)
	}
	if _, err := os.Stat(filepath.Join(dir, movedFromFile)); !os.IsNotExist(err) {
		t.Fatalf("the move's marker is left behind (%v)", err)
	}
}

// A move interrupted after the copy was complete and the link removed is
// finished at the next start, not replaced by a new empty cluster.
func TestAnInterruptedMoveInIsFinished(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "pg")
	moving := dir + ".moving"
	if err := os.MkdirAll(filepath.Join(moving, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(moving, "data", "PG_VERSION"), "16\n")
	writeFile(t, filepath.Join(moving, movedFromFile), "/nowhere\n")
	if err := finishMoveIn(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "PG_VERSION")); err != nil {
		t.Fatalf("the finished copy is not in place: %v", err)
	}
}

func TestURL(t *testing.T) {
	c := &Cluster{layout: layout{socketDir: "/srv/my data/run"}}
	want := "postgres://postgres@/app?host=%2Fsrv%2Fmy%20data%2Frun&port=5432&sslmode=disable"
	if got := c.URL("app"); got != want {
		t.Errorf("URL = %s, want %s", got, want)
	}
	cfg, err := pgx.ParseConfig(c.URL("app"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "/srv/my data/run" || cfg.Port != Port || cfg.Database != "app" || cfg.User != Superuser {
		t.Errorf("pgx reads host=%q port=%d database=%q user=%q", cfg.Host, cfg.Port, cfg.Database, cfg.User)
	}
}

func TestFindBinaries(t *testing.T) {
	if _, err := findBinaries(t.TempDir()); err == nil {
		t.Error("findBinaries in an empty folder succeeded")
	}
	b, err := findBinaries("")
	if err != nil {
		t.Skipf("no PostgreSQL here: %v", err)
	}
	if filepath.Dir(b.initdb) != filepath.Dir(b.postgres) {
		t.Errorf("initdb %s and postgres %s come from different folders", b.initdb, b.postgres)
	}
}

func TestParseLockPid(t *testing.T) {
	for in, want := range map[string]int{"123\n/data\n": 123, "-77\n": 77, "": 0, "garbage\n": 0, " 9 \n": 9} {
		if got := parseLockPid([]byte(in)); got != want {
			t.Errorf("parseLockPid(%q) = %d, want %d", in, got, want)
		}
	}
}

// clusterDir returns a cluster folder inside a fresh temporary folder.
func clusterDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	// t.TempDir makes 0700 folders; under root the server runs as another user and must pass.
	for _, p := range []string{d, filepath.Dir(d)} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(d, "pg")
}

// start starts a cluster and stops it when the test ends.
func start(t *testing.T, opts Options) *Cluster {
	t.Helper()
	opts.Logger = testLogger(t)
	c, err := Start(testContext(t), opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := c.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return c
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// testLogger logs through t until the test's cleanups are done; a server exit reported later
// by the reaping goroutine is dropped instead of panicking the test binary.
func testLogger(t *testing.T) *slog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(w.close)
	return slog.New(slog.NewTextHandler(w, nil))
}

type testWriter struct {
	mu     sync.Mutex
	t      *testing.T
	closed bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.t.Log(strings.TrimSpace(string(p)))
	}
	return len(p), nil
}

func (w *testWriter) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
}

func queryString(t *testing.T, url, sql string) string {
	t.Helper()
	ctx := testContext(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	var s string
	if err := conn.QueryRow(ctx, sql).Scan(&s); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return s
}

func exec1(t *testing.T, url, sql string) {
	t.Helper()
	ctx := testContext(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Issue 16: under root the embedded cluster must not run as the system's
// shared "postgres" account, which another PostgreSQL on the machine uses.
func TestUnderRootTheClusterRunsAsAnAccountOfItsOwn(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the server runs as another user only when the tests run as root")
	}
	t.Parallel()
	c, err := Start(testContext(t), Options{Dir: clusterDir(t), Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(testContext(t))
	info, err := os.Stat(c.layout.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	own, err := lookupAccount("svc-postgres")
	if err != nil {
		t.Fatal(err)
	}
	if st := info.Sys().(*syscall.Stat_t); int(st.Uid) != own.uid {
		t.Fatalf("the data folder belongs to uid %d, not to svc-postgres (uid %d)", st.Uid, own.uid)
	}
}

// A cluster made with a trusted socket (as clusters were before passwords)
// takes a superuser password at its next start; from then on a connection
// without a password is refused, and one with it is served. Members of
// PasswordGroup need their password even on a trusted socket.
func TestAPasswordMakesEveryConnectionSignIn(t *testing.T) {
	t.Parallel()
	dir := clusterDir(t)
	c := start(t, Options{Dir: dir, Fast: true})
	exec1(t, c.URL("postgres"), "CREATE ROLE "+PasswordGroup+" NOLOGIN; CREATE ROLE member LOGIN PASSWORD 'member pw' IN ROLE "+PasswordGroup+"; CREATE ROLE plain LOGIN")
	ctx := testContext(t)
	if conn, err := pgx.Connect(ctx, c.urlWith(url.User("member"), "postgres")); err == nil {
		conn.Close(ctx)
		t.Error("a member of the password group connected without its password on a trusted socket")
	}
	exec1(t, c.urlWith(url.UserPassword("member", "member pw"), "postgres"), "SELECT 1")
	exec1(t, c.urlWith(url.User("plain"), "postgres"), "SELECT 1")
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	c = start(t, Options{Dir: dir, Fast: true, Password: "superuser pw"})
	refused := []*url.Userinfo{url.User(Superuser), url.UserPassword(Superuser, "guess"), url.User("plain")}
	if os.Geteuid() == 0 {
		// Under root the superuser is this process's peer (hbaPeer): no
		// password is asked of it, and TestUnderRootOnlyThePeerSignsInAsTheSuperuser
		// checks that another user's process is refused even with it.
		refused = refused[2:]
	}
	for _, user := range refused {
		if conn, err := pgx.Connect(ctx, c.urlWith(user, "postgres")); err == nil {
			conn.Close(ctx)
			t.Errorf("%s connected without the right password", user.Username())
		}
	}
	if got := queryString(t, c.URL("postgres"), "SELECT current_user"); got != Superuser {
		t.Errorf("the URL with the password connected as %q", got)
	}
}

// Under root the cluster's socket is reachable by other users of the
// machine (plugins run as users of their own), but the superuser only by
// peer authentication from the caller's user and the server's account,
// with or without a superuser password: another user's process is refused
// even with the superuser's password, and signs in as a password role with
// that role's password.
func TestUnderRootOnlyThePeerSignsInAsTheSuperuser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("peer authentication of the superuser is used only when the tests run as root")
	}
	t.Parallel()
	for _, password := range []string{"", "superuser pw"} {
		t.Run(fmt.Sprintf("password %q", password), func(t *testing.T) {
			t.Parallel()
			c := start(t, Options{Dir: clusterDir(t), Fast: true, Password: password})
			exec1(t, c.URL("postgres"), "CREATE ROLE "+PasswordGroup+" NOLOGIN; CREATE ROLE member LOGIN PASSWORD 'member pw' IN ROLE "+PasswordGroup)
			bins, err := findBinaries("")
			if err != nil {
				t.Fatal(err)
			}
			psql := filepath.Join(filepath.Dir(bins.initdb), "psql")
			// nobody: a user that is neither root nor the server's account.
			asNobody := func(user, password string) (string, error) {
				cmd := exec.Command(psql, "--no-psqlrc", "-tA", "-h", c.layout.socketDir, "-p", strconv.Itoa(Port), "-U", user, "-d", "postgres", "-c", "SELECT current_user")
				cmd.Env = []string{"PGPASSWORD=" + password, "PGCONNECT_TIMEOUT=5"}
				cmd.Dir = "/"
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
				out, err := cmd.CombinedOutput()
				return strings.TrimSpace(string(out)), err
			}
			if out, err := asNobody(Superuser, "superuser pw"); err == nil {
				t.Errorf("another user signed in as the superuser: %s", out)
			} else if !strings.Contains(out, "authentication failed") {
				t.Errorf("another user's superuser sign-in failed for another reason than authentication: %s", out)
			}
			if out, err := asNobody("member", "member pw"); err != nil || out != "member" {
				t.Errorf("another user could not sign in as a password role with its password: %v: %s", err, out)
			}
			if got := queryString(t, c.urlWith(url.User(Superuser), "postgres"), "SELECT current_user"); got != Superuser {
				t.Errorf("the peer connected as %q", got)
			}
		})
	}
}

// A cluster an earlier version kept under relocateRoot for a data folder
// since deleted is never used by a new one at the same path, and the start
// says where it is, so that it can be removed.
func TestAClusterLeftByADeletedFolderIsNamedNotUsed(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the cluster was kept outside its folder only when running as root")
	}
	t.Parallel()
	parent := t.TempDir()
	if err := os.Chmod(parent, 0o700); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "pg")
	old := relocatedPath(dir)
	if err := os.MkdirAll(filepath.Join(old, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(old) })
	var logs strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	c, err := Start(testContext(t), Options{Dir: dir, Fast: true, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(testContext(t))
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("%s is not a folder of its own (%v)", dir, err)
	}
	if _, err := os.Stat(filepath.Join(old, "data")); err != nil {
		t.Fatalf("the old cluster was removed: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), old) {
		t.Fatalf("the start did not say where the old cluster is:\n%s", logs.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
