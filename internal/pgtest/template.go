package pgtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"regexp"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// templateNamePattern leaves room for the "_tmp" suffix of the name a template is built under.
var templateNamePattern = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,58}$`)

// renameTimeout bounds waiting for the last sessions of a finished template to go away.
const renameTimeout = 10 * time.Second

// template is a database prepared once per server and cloned for each test.
type template struct {
	name    string
	prepare func(ctx context.Context, url string) error

	mu   sync.Mutex
	done bool
	err  error // remembered, so that every test reports the one failure quickly
}

// RegisterTemplate makes NewDatabase clone the database name, built by prepare the first time
// any test process needs it on the server. prepare receives the URL of an empty database (a
// copy of template0) and must close its connections before it returns.
//
// Call it before Main, in TestMain, once per test process. name is lower-case letters, digits
// and _ (at most 59 bytes) and must change whenever what prepare builds changes, since an
// existing template is reused as is: build it with [TemplateName]. RegisterTemplate panics on a
// bad name or a second call, which are mistakes in the test code.
func RegisterTemplate(name string, prepare func(ctx context.Context, url string) error) {
	if !templateNamePattern.MatchString(name) {
		panic(fmt.Sprintf("pgtest: template name %q: want lower-case letters, digits and _, starting with a letter or _, at most 59 bytes", name))
	}
	if prepare == nil {
		panic("pgtest: RegisterTemplate needs a prepare function")
	}
	harness.mu.Lock()
	defer harness.mu.Unlock()
	if harness.template != nil {
		panic(fmt.Sprintf("pgtest: RegisterTemplate called twice (%s, then %s): register one template per test process", harness.template.name, name))
	}
	harness.template = &template{name: name, prepare: prepare}
}

// TemplateName returns prefix followed by a hash of every file in the given file systems, for
// example "svc_core_3f2a…", so that the template name changes whenever a migration does. prefix
// must be a valid template name of at most 42 bytes. It panics if a file cannot be read; the
// file systems are meant to be embedded.
func TemplateName(prefix string, files ...fs.FS) string {
	if len(prefix) > 42 || !templateNamePattern.MatchString(prefix) {
		panic(fmt.Sprintf("pgtest: template name prefix %q: want lower-case letters, digits and _, at most 42 bytes", prefix))
	}
	h := sha256.New()
	for _, fsys := range files {
		err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := fs.ReadFile(fsys, path)
			if err != nil {
				return err
			}
			// Path and length delimit each file, so moving bytes between files changes the sum.
			fmt.Fprintf(h, "%s\x00%d\x00", path, len(b))
			h.Write(b)
			return nil
		})
		if err != nil {
			panic(fmt.Sprintf("pgtest: TemplateName: %v", err))
		}
	}
	return prefix + "_" + hex.EncodeToString(h.Sum(nil))[:16]
}

// ensure makes sure the template exists on the server, building it if needed.
func (tm *template) ensure(ctx context.Context, adminURL string) error {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if !tm.done {
		tm.err = tm.build(ctx, adminURL)
		tm.done = true
	}
	return tm.err
}

func (tm *template) build(ctx context.Context, adminURL string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("template %s: connect: %w", tm.name, err)
	}
	// Closing the session also releases the advisory lock, whatever happens below.
	defer conn.Close(context.WithoutCancel(ctx))

	if ok, err := databaseExists(ctx, conn, tm.name); err != nil || ok {
		return err
	}
	// Advisory locks are per database: every process locks in the admin URL's database.
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", templateLockKey(tm.name)); err != nil {
		return fmt.Errorf("template %s: wait for the lock: %w", tm.name, err)
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", templateLockKey(tm.name))
	}()
	// Another process may have built it while we waited.
	if ok, err := databaseExists(ctx, conn, tm.name); err != nil || ok {
		return err
	}

	tmp := tm.name + "_tmp"
	// A leftover of a process that died while building; we hold the lock, so nobody else uses it.
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+ident(tmp)+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("template %s: drop the leftover %s: %w", tm.name, tmp, err)
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+ident(tmp)+" TEMPLATE template0"); err != nil {
		return fmt.Errorf("template %s: create %s: %w", tm.name, tmp, err)
	}
	tmpURL, err := withDatabase(adminURL, tmp)
	if err != nil {
		return err
	}
	if err := tm.prepare(ctx, tmpURL); err != nil {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "DROP DATABASE IF EXISTS "+ident(tmp)+" WITH (FORCE)")
		return fmt.Errorf("template %s: prepare: %w", tm.name, err)
	}
	if err := publish(ctx, conn, tmp, tm.name); err != nil {
		return fmt.Errorf("template %s: %w", tm.name, err)
	}
	return nil
}

// publish turns the finished temporary database into the template. The rename is the moment
// other processes can see it, so they never clone a half-built template. A template accepts no
// connections, because a session in it would make every clone fail.
func publish(ctx context.Context, conn *pgx.Conn, tmp, name string) error {
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+ident(tmp)+" ALLOW_CONNECTIONS false"); err != nil {
		return fmt.Errorf("close %s to connections: %w", tmp, err)
	}
	deadline := time.Now().Add(renameTimeout)
	for {
		// Sessions prepare forgot to close, or a pool still closing.
		if _, err := conn.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", tmp); err != nil {
			return fmt.Errorf("end the sessions in %s: %w", tmp, err)
		}
		_, err := conn.Exec(ctx, "ALTER DATABASE "+ident(tmp)+" RENAME TO "+ident(name))
		if err == nil {
			break
		}
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "55006" || time.Now().After(deadline) { // object_in_use
			return fmt.Errorf("rename %s to %s: %w", tmp, name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+ident(name)+" IS_TEMPLATE true"); err != nil {
		return fmt.Errorf("mark %s as a template: %w", name, err)
	}
	return nil
}

func databaseExists(ctx context.Context, conn *pgx.Conn, name string) (bool, error) {
	var ok bool
	err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("template %s: look it up: %w", name, err)
	}
	return ok, nil
}

// templateLockKey is the advisory lock key for building one template; the prefix keeps it
// apart from other advisory locks, such as the migration lock.
func templateLockKey(name string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("svcplatform/pgtest-template:" + name))
	return int64(h.Sum64())
}
