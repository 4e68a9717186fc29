package identity_test

import (
	"context"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/secretbox"
	"github.com/svcplatform/svc/internal/pgtest"
	"github.com/svcplatform/svc/sdk/migrate"
	coresql "github.com/svcplatform/svc/sql/core"
)

// migrationsBefore are the core migrations numbered below version, as a
// gateway of that time had them.
func migrationsBefore(t *testing.T, version string) fs.FS {
	t.Helper()
	all := coresql.Migrations()
	names, err := fs.Glob(all, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	out := fstest.MapFS{}
	for _, n := range names {
		if n < version {
			b, err := fs.ReadFile(all, n)
			if err != nil {
				t.Fatal(err)
			}
			out[n] = &fstest.MapFile{Data: b}
		}
	}
	return out
}

// Migration 0104 gives the signing secret one home: the sealed copy that
// core.webhook_app_secrets kept moves to core.apps for an app whose secret
// core.apps never sealed (made before 0030), where identity opens it and
// the dispatcher signs with it; where core.apps holds one, it stays.
func TestAWebhookSigningSecretMovesToItsAppInMigration0104(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t, pgtest.NewDatabase(t))
	// The template is migrated: start again from an empty schema.
	if _, err := pool.Exec(ctx, "DROP SCHEMA core CASCADE"); err != nil {
		t.Fatal(err)
	}
	if _, err := migrate.Apply(ctx, pool, "core", migrationsBefore(t, "0104")); err != nil {
		t.Fatal(err)
	}
	box, err := secretbox.New(secretbox.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	// An app whose secret only the webhook copy holds sealed, and one whose
	// secret core.apps holds sealed as well, as the gateway kept them.
	unsealed, err := identity.New(pool).Apps.CreateApp(ctx, identity.NewApp{Name: "Before 0030"})
	if err != nil {
		t.Fatal(err)
	}
	ids := identity.New(pool)
	ids.SetSealer(box)
	sealed, err := ids.Apps.CreateApp(ctx, identity.NewApp{Name: "After 0030"})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []identity.CreatedApp{unsealed, sealed} {
		copied := box.Seal([]byte(a.ClientSecret), "webhook signing secret of app "+a.ID)
		if _, err := pool.Exec(ctx, "INSERT INTO core.webhook_app_secrets (app_id, sealed) VALUES ($1, $2)", a.ID, copied); err != nil {
			t.Fatal(err)
		}
	}

	if _, err := migrate.Apply(ctx, pool, "core", coresql.Migrations()); err != nil {
		t.Fatal(err)
	}
	for _, a := range []identity.CreatedApp{unsealed, sealed} {
		s, err := ids.Apps.SigningSecrets(ctx, a.ID)
		if err != nil || s.Current != a.ClientSecret || s.Previous != "" {
			t.Errorf("%s: signing secrets after 0104 = %+v, %v; want its client secret", a.Name, s, err)
		}
	}
	var n int
	err = pool.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = 'core' AND tablename = 'webhook_app_secrets'").Scan(&n)
	if err != nil || n != 0 {
		t.Fatalf("core.webhook_app_secrets left after 0104 (%d, %v)", n, err)
	}
}

// A sealed secret opens only for its own app, under either context it was
// sealed with.
func TestASealedClientSecretOpensOnlyForItsApp(t *testing.T) {
	t.Parallel()
	box, err := secretbox.New(secretbox.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	for _, context := range []string{"client secret of app ", "webhook signing secret of app "} {
		sealed := identity.SealedSecrets{Current: box.Seal([]byte("s3cret"), context+"42")}
		if s, err := sealed.Open(box, 42, time.Now()); err != nil || s.Current != "s3cret" {
			t.Errorf("%q: Open = %+v, %v", context, s, err)
		}
		if _, err := sealed.Open(box, 43, time.Now()); err == nil || !strings.Contains(err.Error(), "43") {
			t.Errorf("%q: another app's Open = %v, want an error naming it", context, err)
		}
	}
}
