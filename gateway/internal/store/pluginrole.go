package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/svcplatform/svc/internal/pgembed"
)

// ErrNoRoles reports that the gateway's database role may not create roles
// (an external database where it lacks CREATEROLE): plugins then share the
// gateway's role, and the operator is told how to isolate them.
var ErrNoRoles = errors.New("the gateway's database role may not create roles (grant it CREATEROLE to give each plugin its own)")

// schemaName is what a plugin's schema may be called (sdk/migrate's rule).
var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// PluginURL gives plugin its own database role and answers the URL the
// plugin connects with. The role:
//
//   - owns the plugin's schema (named after the plugin) and everything in
//     it, and no other schema: it cannot read or change the core tables
//     (users, tokens, secrets) or another plugin's data;
//   - may INSERT into core.outbox, the one way a plugin emits events, and
//     neither read nor change what is there;
//   - cannot create schemas, databases or roles;
//   - signs in with a password even on the embedded cluster's private
//     socket (pgembed.PasswordGroup), so no plugin can connect as another
//     role, the gateway's included.
//
// The password is secret, derived by the caller from the master key, so it
// is the same at every start and on every gateway of one database, and is
// never stored: the role keeps a SCRAM verifier of it, sent by this function
// (never the password itself). Calling it again re-applies every grant, so a
// schema made before roles existed is handed to its plugin's role.
//
// Roles belong to the whole cluster, not to one database; the role's name
// carries a digest of the database name so that several databases of one
// cluster (tests, or two installations) never share a plugin role.
func (s *Store) PluginURL(ctx context.Context, plugin string, secret []byte) (string, error) {
	u, err := url.Parse(s.URL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("the database URL is not a postgres:// URL, so a plugin role's URL cannot be made from it")
	}
	dbname := s.Pool.Config().ConnConfig.Database
	role := pluginRole(plugin, dbname)
	password := hex.EncodeToString(secret)

	if err := ensureGroup(ctx, s, pgembed.PasswordGroup); err != nil {
		return "", err
	}
	err = pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		// Two gateways of one database starting together take turns.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('svc plugin roles', 0))`); err != nil {
			return err
		}
		r := pgx.Identifier{role}.Sanitize()
		schema := pgx.Identifier{plugin}.Sanitize()
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, role).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			if _, err := tx.Exec(ctx, `CREATE ROLE `+r); err != nil {
				return err
			}
		}
		verifier, err := pgembed.ScramVerifier(password)
		if err != nil {
			return err
		}
		stmts := []string{
			// No inheritance: the role has exactly its own rights.
			`ALTER ROLE ` + r + ` WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS PASSWORD '` + verifier + `'`,
			`GRANT ` + pgx.Identifier{pgembed.PasswordGroup}.Sanitize() + ` TO ` + r,
			`GRANT USAGE ON SCHEMA core TO ` + r,
			`GRANT INSERT ON core.outbox TO ` + r,
			`GRANT USAGE ON SEQUENCE core.outbox_seq_seq TO ` + r,
		}
		// A plugin whose name cannot be a schema's (testplugin-alias) gets
		// no schema: it can only emit events.
		hasSchema := schemaName.MatchString(plugin)
		if hasSchema {
			stmts = append(stmts,
				`CREATE SCHEMA IF NOT EXISTS `+schema,
				`ALTER SCHEMA `+schema+` OWNER TO `+r,
				`REVOKE ALL ON SCHEMA `+schema+` FROM PUBLIC`)
		}
		for _, q := range stmts {
			if _, err := tx.Exec(ctx, q); err != nil {
				return fmt.Errorf("%.60s…: %w", q, err)
			}
		}
		if !hasSchema {
			return nil
		}
		return reassignSchema(ctx, tx, plugin, role)
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42501" { // insufficient_privilege
		return "", ErrNoRoles
	}
	if err != nil {
		return "", fmt.Errorf("database role for plugin %s: %w", plugin, err)
	}
	u.User = url.UserPassword(role, password)
	return u.String(), nil
}

// pluginRole names plugin's role in database dbname: readable, unique per
// database and plugin, within PostgreSQL's 63 bytes.
func pluginRole(plugin, dbname string) string {
	sum := sha256.Sum256([]byte(dbname + "\x00" + plugin))
	readable := notInName.ReplaceAllString(strings.ToLower(plugin), "_")
	if len(readable) > 36 {
		readable = readable[:36]
	}
	return "svc_plugin_" + readable + "_" + hex.EncodeToString(sum[:4])
}

var notInName = regexp.MustCompile(`[^a-z0-9_]`)

// ensureGroup creates the cluster-wide group role unless it exists. Other
// databases of the cluster may race to create it; losing that race is fine.
func ensureGroup(ctx context.Context, s *Store, group string) error {
	var exists bool
	if err := s.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, group).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	_, err := s.Pool.Exec(ctx, `CREATE ROLE `+pgx.Identifier{group}.Sanitize()+` NOLOGIN`)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "42710", "23505": // duplicate_object, unique_violation: someone else made it
			return nil
		case "42501":
			return ErrNoRoles
		}
	}
	return err
}

// reassignSchema gives role everything in schema that another role owns:
// tables (with their indexes and owned sequences), free-standing
// sequences, views, functions and types. Objects made before plugins had
// roles belong to the gateway's role.
func reassignSchema(ctx context.Context, tx pgx.Tx, schema, role string) error {
	rows, err := tx.Query(ctx, `
SELECT kind, name FROM (
  SELECT CASE c.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW'
                        WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END AS kind,
         quote_ident(c.relname) AS name, c.relkind = 'S' AS later
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'S', 'v', 'm', 'f')
    AND pg_get_userbyid(c.relowner) <> $2
    -- a sequence that belongs to a column moves with its table
    AND NOT (c.relkind = 'S' AND EXISTS (SELECT 1 FROM pg_depend d
             WHERE d.objid = c.oid AND d.classid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')))
  UNION ALL
  SELECT 'FUNCTION', p.oid::regprocedure::text, false
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
  WHERE n.nspname = $1 AND pg_get_userbyid(p.proowner) <> $2
  UNION ALL
  SELECT 'TYPE', format_type(t.oid, NULL), false
  FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
  WHERE n.nspname = $1 AND pg_get_userbyid(t.typowner) <> $2
    AND t.typtype IN ('e', 'd', 'r') -- enums, domains, ranges; a table's row type moves with it
) o ORDER BY later, kind, name`, schema, role)
	if err != nil {
		return err
	}
	type object struct{ kind, name string }
	objects, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (object, error) {
		var o object
		return o, r.Scan(&o.kind, &o.name)
	})
	if err != nil {
		return err
	}
	for _, o := range objects {
		name := o.name
		if o.kind != "FUNCTION" && o.kind != "TYPE" {
			name = pgx.Identifier{schema}.Sanitize() + "." + name
		}
		if _, err := tx.Exec(ctx, `ALTER `+o.kind+` `+name+` OWNER TO `+pgx.Identifier{role}.Sanitize()); err != nil {
			return fmt.Errorf("give %s %s to %s: %w", o.kind, name, role, err)
		}
	}
	return nil
}

// SameRole answers replicaURL signing in as pluginURL does: the plugin's
// own role and password (store.PluginURL), which a streaming standby has by
// replication. When the plugin shares the gateway's URL (gatewayURL: the
// database role may not create roles), replicaURL is answered as it is.
func SameRole(replicaURL, pluginURL, gatewayURL string) (string, error) {
	if pluginURL == gatewayURL {
		return replicaURL, nil
	}
	r, err := url.Parse(replicaURL)
	if err != nil || (r.Scheme != "postgres" && r.Scheme != "postgresql") {
		return "", errors.New("the read replica's URL is not a postgres:// URL, so a plugin role's URL cannot be made from it")
	}
	p, err := url.Parse(pluginURL)
	if err != nil {
		return "", errors.New("a plugin's database URL does not parse")
	}
	r.User = p.User
	return r.String(), nil
}
