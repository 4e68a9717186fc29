package store

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/svcplatform/svc/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func openStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), pgtest.NewDatabase(t), t.TempDir(), "", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func connect(t *testing.T, dbURL string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func wantCode(t *testing.T, err error, code, what string) {
	t.Helper()
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != code {
		t.Errorf("%s: err = %v, want SQLSTATE %s", what, err, code)
	}
}

// A plugin's role owns its schema, emits events, and can do nothing else:
// each escape a compromised plugin would try is refused.
func TestAPluginRoleOwnsItsSchemaAndWritesOnlyTheOutbox(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	// A schema made before plugins had roles, owned by the gateway's role.
	if _, err := s.Pool.Exec(ctx, `CREATE SCHEMA book; CREATE TABLE book.posts (id bigserial PRIMARY KEY, body text);
		CREATE SEQUENCE book.post_id_seq; CREATE TYPE book.mood AS ENUM ('ok')`); err != nil {
		t.Fatal(err)
	}
	bookURL, err := s.PluginURL(ctx, "book", []byte("book secret"))
	if err != nil {
		t.Fatal(err)
	}
	otherURL, err := s.PluginURL(ctx, "other", []byte("other secret"))
	if err != nil {
		t.Fatal(err)
	}
	book, other := connect(t, bookURL), connect(t, otherURL)
	if _, err := other.Exec(ctx, `CREATE TABLE other.notes (id int PRIMARY KEY)`); err != nil {
		t.Fatalf("a plugin creates a table in its own schema: %v", err)
	}

	t.Run("its own schema, made earlier, is entirely its own", func(t *testing.T) {
		if _, err := book.Exec(ctx, `INSERT INTO book.posts (body) VALUES ('hi'); SELECT nextval('book.post_id_seq');
			ALTER TABLE book.posts ADD COLUMN likes int; CREATE TABLE book.likes (post_id bigint); DROP TYPE book.mood`); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("it emits events into the outbox", func(t *testing.T) {
		if _, err := book.Exec(ctx, `INSERT INTO core.outbox (id, type, data) VALUES ('ev_1', 'book.post.created', '{}')`); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("it cannot read the outbox, the core tables or another plugin's schema", func(t *testing.T) {
		for _, q := range []string{`SELECT count(*) FROM core.outbox`, `SELECT count(*) FROM core.users`,
			`SELECT count(*) FROM core.apps`, `UPDATE core.outbox SET type = 'x'`, `DELETE FROM core.outbox`,
			`SELECT count(*) FROM other.notes`, `CREATE TABLE core.mine (id int)`} {
			_, err := book.Exec(ctx, q)
			wantCode(t, err, "42501", q)
		}
	})
	t.Run("it cannot create schemas or roles, nor make itself more", func(t *testing.T) {
		for _, q := range []string{`CREATE SCHEMA squat`, `CREATE ROLE evil`, `ALTER ROLE CURRENT_USER SUPERUSER`, `CREATE DATABASE evil`} {
			_, err := book.Exec(ctx, q)
			wantCode(t, err, "42501", q)
		}
	})
	t.Run("it cannot sign in without its password, nor as the gateway", func(t *testing.T) {
		u, _ := url.Parse(bookURL)
		u.User = url.UserPassword(u.User.Username(), "guess")
		_, err := pgx.Connect(ctx, u.String())
		wantCode(t, err, "28P01", "wrong password")
		u.User = url.User(u.User.Username())
		_, err = pgx.Connect(ctx, u.String())
		if err == nil {
			t.Error("the plugin role signed in with no password")
		}
	})
	t.Run("provisioning again keeps the same password working", func(t *testing.T) {
		again, err := s.PluginURL(ctx, "book", []byte("book secret"))
		if err != nil || again != bookURL {
			t.Fatalf("again = %v, %v", again != bookURL, err)
		}
		connect(t, again)
	})
	t.Run("a plugin whose name cannot be a schema's gets a role with no schema", func(t *testing.T) {
		u, err := s.PluginURL(ctx, "book-alias", []byte("alias secret"))
		if err != nil {
			t.Fatal(err)
		}
		alias := connect(t, u)
		_, err = alias.Exec(ctx, `SELECT count(*) FROM book.posts`)
		wantCode(t, err, "42501", "another plugin's schema")
		if _, err := alias.Exec(ctx, `INSERT INTO core.outbox (id, type, data) VALUES ('ev_2', 'x', '{}')`); err != nil {
			t.Fatal(err)
		}
	})
}
