package pgembed

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// PasswordGroup is the role whose members must sign in with a password
// (SCRAM-SHA-256) even where the private socket is otherwise trusted. The
// gateway makes each plugin's database role a member, so that a plugin
// cannot connect as any role but its own.
const PasswordGroup = "svc_password_login"

// hbaTrusted is the client authentication of a cluster with no superuser
// password (tests, and the first moments of every start): the private
// socket is trusted, except for PasswordGroup's members. Rules are read top
// down and the first match decides.
const hbaTrusted = `# Written by pgembed at every start; edits are lost.
local all +` + PasswordGroup + ` scram-sha-256
# Everyone else on the private socket is trusted: the socket folder's
# permissions are what keep other users of the machine out.
local all all trust
local replication all trust
# Nothing listens on TCP; should someone enable it, refuse.
host all all all reject
host replication all all reject
`

// hbaPasswords is the client authentication of a cluster whose superuser
// has a password (Options.Password): every role signs in with its password,
// so a process that can reach the socket (a plugin, run as the same account
// as the gateway) can still act only as the role it was given.
const hbaPasswords = `# Written by pgembed at every start; edits are lost.
# Every role, the superuser included, signs in with its password.
local all all scram-sha-256
local replication all scram-sha-256
# Nothing listens on TCP; should someone enable it, refuse.
host all all all reject
host replication all all reject
`

// Under root the server runs as an account of its own, and other users of
// the machine (plugins, each a user of its own) must reach its socket
// (prepareLayout): the superuser is then reachable only by peer
// authentication from the caller's own user and the server's account
// (identMap), never by a password nor by trust, so a process of another
// user cannot sign in as the superuser even if it learned the password.
// hbaTrustedPeer is hbaTrusted so; hbaPeer is hbaPasswords so.
const (
	superuserByPeer = `# The superuser: only the process that started the server and the server's own account.
local all ` + Superuser + ` peer map=` + identMap + `
local replication ` + Superuser + ` peer map=` + identMap + `
`
	hbaTrustedPeer = `# Written by pgembed at every start; edits are lost.
local all +` + PasswordGroup + ` scram-sha-256
` + superuserByPeer + `# Other roles are trusted: a cluster without a superuser password is for tests.
local all all trust
local replication all trust
# Nothing listens on TCP; should someone enable it, refuse.
host all all all reject
host replication all all reject
`
	hbaPeer = `# Written by pgembed at every start; edits are lost.
# Members of the password group (the plugins' roles) sign in with their passwords.
local all +` + PasswordGroup + ` scram-sha-256
` + superuserByPeer + `# Every other role signs in with its password.
local all all scram-sha-256
local replication all scram-sha-256
# Nothing listens on TCP; should someone enable it, refuse.
host all all all reject
host replication all all reject
`
)

// identMap names the pg_ident.conf map of the operating system users who
// may sign in as the superuser under hbaPeer.
const identMap = "svc_superuser"

// writeAuth writes the client authentication of a server about to start
// (or reload): trusted or with passwords, and under root (acct != nil) with
// the superuser reachable by its peers alone, who are written into
// pg_ident.conf: the caller's user and the server's account.
func writeAuth(l layout, acct *account, passwords bool) error {
	if acct == nil {
		if passwords {
			return writeHBA(l, acct, hbaPasswords)
		}
		return writeHBA(l, acct, hbaTrusted)
	}
	me, err := user.Current()
	if err != nil {
		return fmt.Errorf("pgembed: who runs the server: %w", err)
	}
	var b strings.Builder
	b.WriteString("# Written by pgembed at every start; edits are lost.\n")
	for _, u := range []string{me.Username, acct.name} {
		fmt.Fprintf(&b, "%s %s %s\n", identMap, u, Superuser)
	}
	if err := writeConf(l, acct, "pg_ident.conf", b.String()); err != nil {
		return err
	}
	if passwords {
		return writeHBA(l, acct, hbaPeer)
	}
	return writeHBA(l, acct, hbaTrustedPeer)
}

// writeHBA writes pg_hba.conf into the data folder, owned by the server's
// account, before the server reads it, so that clusters made before a rule
// existed get it too.
func writeHBA(l layout, acct *account, rules string) error {
	return writeConf(l, acct, "pg_hba.conf", rules)
}

// writeConf replaces the data folder's configuration file name with
// content, owned by the server's account.
func writeConf(l layout, acct *account, name, content string) error {
	path := filepath.Join(l.dataDir, name)
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		return fmt.Errorf("pgembed: write %s: %w", name, err)
	}
	if err := acct.chown(tmp); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("pgembed: write %s: %w", name, err)
	}
	return nil
}

// requirePasswords gives the superuser password and then makes every
// connection need one: the server started with the trusted rules (the only
// way in before the superuser has a password), and no other process of ours
// runs yet. It returns once a connection without a password is refused.
func (c *Cluster) requirePasswords(ctx context.Context, acct *account, password string) error {
	conn, err := pgx.Connect(ctx, c.urlWith(url.User(Superuser), "postgres"))
	if err != nil {
		return fmt.Errorf("pgembed: connect to set the superuser's password: %w", err)
	}
	defer conn.Close(context.Background())
	// The password travels as a SCRAM verifier, never in clear: server logs
	// and statistics never see it.
	verifier, err := ScramVerifier(password)
	if err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, `ALTER ROLE `+pgx.Identifier{Superuser}.Sanitize()+` PASSWORD '`+verifier+`'`); err != nil {
		return fmt.Errorf("pgembed: set the superuser's password: %w", err)
	}
	if err := writeAuth(c.layout, acct, true); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, `SELECT pg_reload_conf()`); err != nil {
		return fmt.Errorf("pgembed: reload pg_hba.conf: %w", err)
	}
	// The reload is asynchronous: wait until the trusted way in is closed.
	// Under hbaPeer the superuser still gets in (we are its peer), so the
	// probe is a role that does not exist: trusted, it gets as far as
	// "role does not exist"; after the reload it is asked for a password.
	probeUser, stillTrusted := url.User(Superuser), func(err error) bool { return err == nil }
	if acct != nil {
		probeUser = url.User("svc_reload_probe")
		stillTrusted = func(err error) bool {
			var pgErr *pgconn.PgError
			return errors.As(err, &pgErr) && pgErr.Code == "28000"
		}
	}
	for {
		probe, err := pgx.Connect(ctx, c.urlWith(probeUser, "postgres"))
		if err == nil {
			_ = probe.Close(ctx)
		}
		if !stillTrusted(err) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.New("pgembed: the server still trusts connections without a password after reloading pg_hba.conf")
		case <-time.After(pollInterval):
		}
	}
}

// URLFor is [Cluster.URL] for the cluster folder dir, whether or not this
// process started it: for tools that connect to a running cluster, such as
// `gateway database-url`. password is the superuser's (empty when trusted).
func URLFor(dir, dbname, password string) (string, error) {
	l, err := newLayout(dir)
	if err != nil {
		return "", err
	}
	c := &Cluster{layout: l, password: password}
	return c.URL(dbname), nil
}
