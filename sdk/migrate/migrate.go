package migrate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

var (
	// fileNamePattern is NNNN_name.sql; the name part keeps file names portable and greppable.
	fileNamePattern = regexp.MustCompile(`^([0-9]{4,})_([a-z0-9][a-z0-9_]*)\.sql$`)
	// ownerPattern keeps owner names plain identifiers: they name a schema and appear in
	// messages, so nothing that needs quoting to be read correctly.
	ownerPattern = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)
)

// unlockTimeout bounds releasing the advisory lock, which must happen even when the caller's
// context is already done.
const unlockTimeout = 10 * time.Second

// migration is one file.
type migration struct {
	version  int
	file     string // the file name, e.g. 0001_init.sql
	sql      string
	checksum string // hex SHA-256 of the file
	// replaces are the checksums of earlier contents of the file that a
	// database may have recorded, declared by "-- migrate:replaces <hex>"
	// lines: edits that change nothing for a database that applied the old
	// text (see doc.go).
	replaces []string
}

// record is one row of schema_migrations.
type record struct {
	version  int
	file     string
	checksum string
}

// Apply brings schema owner up to date with the migration files at the root of files and
// returns the names of the files it applied, in order (none if the schema was current).
//
// It creates the schema and its schema_migrations table if needed. On error, the files applied
// before the failing one stay applied and are returned; the failing one left no trace.
func Apply(ctx context.Context, db *pgxpool.Pool, owner string, files fs.FS) (applied []string, err error) {
	if !ownerPattern.MatchString(owner) {
		return nil, fmt.Errorf("migrate: owner %q is not a valid schema name (lower-case letters, digits and _, starting with a letter or _)", owner)
	}
	migrations, err := load(files)
	if err != nil {
		return nil, fmt.Errorf("migrate: schema %s: %w", owner, err)
	}

	// One connection carries the lock and every migration: the lock belongs to the session, and
	// a pool of one connection must not deadlock against itself.
	conn, err := db.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: schema %s: acquire a connection: %w", owner, err)
	}
	defer conn.Release()
	if err := lock(ctx, conn.Conn(), owner); err != nil {
		return nil, err
	}
	defer unlock(ctx, conn.Conn(), owner)

	schema := pgx.Identifier{owner}.Sanitize()
	table := pgx.Identifier{owner, "schema_migrations"}.Sanitize()
	if err := createSchema(ctx, conn.Conn(), owner, schema); err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+table+` (
	version    int PRIMARY KEY,
	name       text NOT NULL,
	checksum   text NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
)`); err != nil {
		return nil, fmt.Errorf("migrate: create table %s.schema_migrations: %w", owner, err)
	}
	records, err := appliedRecords(ctx, conn.Conn(), table)
	if err != nil {
		return nil, fmt.Errorf("migrate: schema %s: read schema_migrations: %w", owner, err)
	}
	pending, err := plan(owner, migrations, records)
	if err != nil {
		return nil, err
	}
	for _, m := range pending {
		if err := applyOne(ctx, conn.Conn(), schema, table, m); err != nil {
			return applied, fmt.Errorf("migrate: schema %s: %w", owner, err)
		}
		applied = append(applied, m.file)
	}
	return applied, nil
}

// createSchema creates the owner schema unless it exists. CREATE SCHEMA IF NOT EXISTS would
// demand the CREATE privilege on the database even then, which a plugin whose schema an operator
// made for it need not have.
func createSchema(ctx context.Context, conn *pgx.Conn, owner, schema string) error {
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT to_regnamespace($1) IS NOT NULL`, schema).Scan(&exists); err != nil {
		return fmt.Errorf("migrate: look up schema %s: %w", owner, err)
	}
	if exists {
		return nil
	}
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		return fmt.Errorf("migrate: create schema %s: %w", owner, err)
	}
	return nil
}

// load reads and checks the migration files, sorted by version.
func load(files fs.FS) ([]migration, error) {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return nil, fmt.Errorf("read migration files: %w", err)
	}
	var out []migration
	seen := map[int]string{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || path.Ext(name) != ".sql" {
			continue
		}
		m := fileNamePattern.FindStringSubmatch(name)
		if m == nil {
			return nil, fmt.Errorf("migration file %s is misnamed: want NNNN_name.sql (at least four digits, then lower-case letters, digits and _)", name)
		}
		version, err := strconv.Atoi(m[1])
		if err != nil || version == 0 {
			return nil, fmt.Errorf("migration file %s: versions start at 0001", name)
		}
		if other, dup := seen[version]; dup {
			return nil, fmt.Errorf("migration files %s and %s have the same version %d: renumber one after the highest version", other, name, version)
		}
		seen[version] = name
		b, err := fs.ReadFile(files, name)
		if err != nil {
			return nil, fmt.Errorf("read migration file %s: %w", name, err)
		}
		sum := sha256.Sum256(b)
		out = append(out, migration{version: version, file: name, sql: string(b), checksum: hex.EncodeToString(sum[:]),
			replaces: replacedChecksums(string(b))})
	}
	slices.SortFunc(out, func(a, b migration) int { return a.version - b.version })
	return out, nil
}

// replacesLine declares an earlier checksum of the file it is in.
var replacesLine = regexp.MustCompile(`(?m)^-- migrate:replaces ([0-9a-f]{64})\s*$`)

// replacedChecksums reads the "-- migrate:replaces <hex>" lines of a file.
func replacedChecksums(sql string) []string {
	var out []string
	for _, m := range replacesLine.FindAllStringSubmatch(sql, -1) {
		out = append(out, m[1])
	}
	return out
}

// plan compares the files with what the database recorded and returns the files to apply, or
// why it is not safe to go on.
func plan(owner string, migrations []migration, records []record) ([]migration, error) {
	byVersion := make(map[int]migration, len(migrations))
	known := 0
	for _, m := range migrations {
		byVersion[m.version] = m
		known = m.version
	}
	applied := make(map[int]bool, len(records))
	current := 0
	for _, r := range records {
		applied[r.version] = true
		current = max(current, r.version)
	}
	for _, r := range records {
		m, ok := byVersion[r.version]
		switch {
		case !ok && r.version > known:
			return nil, fmt.Errorf("migrate: database schema %s is at version %d but this binary only knows up to %d: run a newer binary", owner, current, known)
		case !ok:
			return nil, fmt.Errorf("migrate: database schema %s has version %d (%s) applied but this binary has no such migration: a migration file was removed or renumbered; restore it", owner, r.version, r.file)
		case m.checksum != r.checksum && !slices.Contains(m.replaces, r.checksum):
			return nil, fmt.Errorf("migrate: migration %s of schema %s was changed after it was applied (checksum %.12s… recorded, %.12s… now): migrations are forward-only, so restore the file and put the change in a new migration", m.file, owner, r.checksum, m.checksum)
		}
	}
	var pending []migration
	for _, m := range migrations {
		if applied[m.version] {
			continue
		}
		if m.version < current {
			return nil, fmt.Errorf("migrate: migration %s of schema %s is numbered below version %d, which is already applied: renumber it after the highest version", m.file, owner, current)
		}
		pending = append(pending, m)
	}
	return pending, nil
}

func appliedRecords(ctx context.Context, conn *pgx.Conn, table string) ([]record, error) {
	rows, err := conn.Query(ctx, `SELECT version, name, checksum FROM `+table+` ORDER BY version`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (record, error) {
		var r record
		err := row.Scan(&r.version, &r.file, &r.checksum)
		return r, err
	})
}

// applyOne runs one migration and records it in one transaction, so it happens entirely or not
// at all.
func applyOne(ctx context.Context, conn *pgx.Conn, schema, table string, m migration) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("migration %s: begin: %w", m.file, err)
	}
	// After Commit this is a no-op; after a failure it must run even if ctx is done.
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()

	if _, err := tx.Exec(ctx, `SET LOCAL search_path TO `+schema+`, public`); err != nil {
		return fmt.Errorf("migration %s: set search_path: %w", m.file, err)
	}
	// Without arguments pgx uses the simple protocol, which runs a file of many statements.
	if _, err := tx.Exec(ctx, m.sql); err != nil {
		return fmt.Errorf("migration %s failed%s and was rolled back: %w", m.file, errorLine(err, m.sql), err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO `+table+` (version, name, checksum) VALUES ($1, $2, $3)`,
		m.version, m.file, m.checksum); err != nil {
		return fmt.Errorf("migration %s: record it in schema_migrations: %w", m.file, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("migration %s: commit: %w", m.file, err)
	}
	return nil
}

// errorLine turns the character position PostgreSQL reports into " at line N", which is what a
// person fixing the file needs.
func errorLine(err error, sql string) string {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Position <= 0 {
		return ""
	}
	runes := []rune(sql)
	pos := min(int(pgErr.Position)-1, len(runes))
	return " at line " + strconv.Itoa(1+strings.Count(string(runes[:pos]), "\n"))
}

// lockKey is the advisory lock key of an owner. The prefix keeps it apart from other users of
// advisory locks in the same database.
func lockKey(owner string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("svcplatform/migrate:" + owner))
	return int64(h.Sum64())
}

func lock(ctx context.Context, conn *pgx.Conn, owner string) error {
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, lockKey(owner)); err != nil {
		return fmt.Errorf("migrate: schema %s: wait for the migration lock: %w", owner, err)
	}
	return nil
}

// unlock releases the advisory lock. If that fails the connection is closed instead, since
// ending the session is the other way to release it; a pooled connection still holding the
// lock would block every later Apply for the owner.
func unlock(ctx context.Context, conn *pgx.Conn, owner string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unlockTimeout)
	defer cancel()
	var released bool
	if err := conn.QueryRow(ctx, `SELECT pg_advisory_unlock($1)`, lockKey(owner)).Scan(&released); err != nil || !released {
		_ = conn.Close(ctx)
	}
}
