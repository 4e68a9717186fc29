package seed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/observe"
	"github.com/svcplatform/svc/gateway/internal/webhook"
)

// FileName is the credentials file written into the data folder.
const FileName = "dev-credentials.json"

// RedirectURI is the seeded app's registered redirect URI: loopback, so a
// local test client can listen on it.
const RedirectURI = "http://127.0.0.1:8765/callback"

// Options configure the seed.
type Options struct {
	// BaseURL is the gateway's public URL (the OAuth issuer).
	BaseURL string
	// DataDir is where the credentials file is written.
	DataDir string
	// AdminToken is the operator's admin token in plain, when known (the
	// configured one, or one generated at this start). When empty, the seed
	// rotates the admin token so that the file can hold a working one.
	AdminToken string
}

// Credentials is the content of dev-credentials.json.
type Credentials struct {
	BaseURL string          `json:"base_url"`
	Users   map[string]User `json:"users"`
	Page    PageCredentials `json:"page"`
	App     AppCredentials  `json:"app"`
	// Business is the owner's business portfolio, holding the Page and the
	// app (unverified).
	Business   BusinessCredentials `json:"business"`
	AdminToken string              `json:"admin_token"`
}

// User is one seeded user.
type User struct {
	ID       string `json:"id"`
	Username string `json:"username"`
	Password string `json:"password"`
}

// PageCredentials names the seeded Page.
type PageCredentials struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// BusinessCredentials names the seeded business portfolio.
type BusinessCredentials struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// AppCredentials is the seeded app with its secrets.
type AppCredentials struct {
	ID           string `json:"id"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	// WebhookSecret is ClientSecret as Standard Webhooks libraries take
	// it: "whsec_" and its base64 (docs/WEBHOOKS.md).
	WebhookSecret string `json:"webhook_secret"`
	APIKey        string `json:"api_key"`
	RedirectURI   string `json:"redirect_uri"`
}

// Run seeds the development world unless this installation was seeded
// already or holds users. It returns the path of the credentials file
// (empty when nothing was seeded now) and the credentials.
func Run(ctx context.Context, ids *identity.Service, opts Options) (string, *Credentials, error) {
	var creds *Credentials
	err := ids.InTx(ctx, func(tx *identity.Service) error {
		q := tx.Queries()
		if _, err := q.EnsureInstallation(ctx, observe.NewTraceID()); err != nil {
			return fmt.Errorf("ensure installation: %w", err)
		}
		// The row lock makes a second gateway wait here until the first
		// commits, then see dev_seeded.
		seeded, err := q.LockInstallation(ctx)
		if err != nil {
			return fmt.Errorf("lock installation: %w", err)
		}
		if seeded {
			return nil
		}
		users, err := q.CountUsers(ctx)
		if err != nil {
			return fmt.Errorf("count users: %w", err)
		}
		if users > 0 {
			slog.InfoContext(ctx, "development seed skipped: the database already has users")
			return q.MarkDevSeeded(ctx)
		}
		if creds, err = create(ctx, tx, q, opts); err != nil {
			return err
		}
		return q.MarkDevSeeded(ctx)
	})
	if err != nil || creds == nil {
		return "", nil, err
	}
	path := filepath.Join(opts.DataDir, FileName)
	if err := writeFile(path, creds); err != nil {
		// The world exists but its passwords are lost; say how to start over.
		return "", nil, fmt.Errorf("write %s (the seed is in the database; start on an empty database to seed again): %w", path, err)
	}
	slog.InfoContext(ctx, "development seed created", "credentials", path, "user_id", creds.Users["owner"].ID,
		"page_id", creds.Page.ID, "app_id", creds.App.ID)
	return path, creds, nil
}

func create(ctx context.Context, ids *identity.Service, q *coredb.Queries, opts Options) (*Credentials, error) {
	c := &Credentials{BaseURL: opts.BaseURL, Users: map[string]User{}}
	people := []struct {
		key, username, name string
		staff               bool
	}{
		{"owner", "owner", "Olivia Owner", false},
		{"consumer", "consumer", "Casey Consumer", false},
		{"staff", "staff", "Sam Staff", true},
	}
	for _, p := range people {
		pw := identity.NewPassword()
		u, err := ids.Users.CreateUser(ctx, identity.NewUser{Username: p.username, Name: p.name, Password: pw, Staff: p.staff})
		if err != nil {
			return nil, fmt.Errorf("seed user %s: %w", p.key, err)
		}
		c.Users[p.key] = User{ID: u.ID, Username: u.Username, Password: pw}
	}
	owner, consumer := c.Users["owner"].ID, c.Users["consumer"].ID
	// The Page is made as a person makes one (POST me/pages, then its
	// settings on page/<id>): nothing about it is special.
	page, err := ids.Pages.CreatePage(ctx, identity.NewPage{Name: "Demo Coffee", Category: "Coffee shop", OwnerID: owner})
	if err != nil {
		return nil, fmt.Errorf("seed page: %w", err)
	}
	on := true
	if err := ids.Pages.UpdateSettings(ctx, page.ID, identity.PageSettings{Published: &on, ChatSurfacing: &on, InboxMergeLinked: &on}); err != nil {
		return nil, fmt.Errorf("seed page settings: %w", err)
	}
	c.Page = PageCredentials{ID: page.ID, Name: page.Name}
	// wearables too: pushes and their events concern no Page, and a
	// developer of the seeded world should receive them without a change
	// (an app subscribes only to events of products it has, CONTRACT §15).
	// lenses: the app makes the seeded lenses once the plugins serve (Lenses).
	app, err := ids.Apps.CreateApp(ctx, identity.NewApp{Name: "Demo App", AdminID: owner,
		RedirectURIs: []string{RedirectURI, "http://localhost:8765/callback"}, Products: []string{"svcchat", "wearables", "lenses"}})
	if err != nil {
		return nil, fmt.Errorf("seed app: %w", err)
	}
	if err := ids.Apps.AddTestUser(ctx, app.ID, consumer); err != nil {
		return nil, fmt.Errorf("seed test user: %w", err)
	}
	if err := ids.Apps.LinkPage(ctx, app.ID, page.ID, []string{"svcchat"}); err != nil {
		return nil, fmt.Errorf("seed page link: %w", err)
	}
	key, err := ids.Apps.CreateAppKey(ctx, app.ID)
	if err != nil {
		return nil, fmt.Errorf("seed app key: %w", err)
	}
	// The business is made as a person makes one (POST me/business_portfolios,
	// then business/<id>/assets), by the owner, with the same checks.
	biz, err := ids.Businesses.Create(ctx, owner, "Demo Coffee Co.")
	if err != nil {
		return nil, fmt.Errorf("seed business: %w", err)
	}
	for _, a := range []struct{ typ, id string }{{"PAGE", page.ID}, {"APP", app.ID}} {
		if err := ids.Businesses.AddAsset(ctx, biz.ID, owner, a.typ, a.id, false); err != nil {
			return nil, fmt.Errorf("seed business asset: %w", err)
		}
	}
	c.Business = BusinessCredentials{ID: biz.ID, Name: biz.Name}
	c.App = AppCredentials{ID: app.ID, ClientID: app.ClientID, ClientSecret: app.ClientSecret,
		WebhookSecret: webhook.StandardKey(app.ClientSecret), APIKey: key,
		RedirectURI: RedirectURI}
	c.AdminToken = opts.AdminToken
	if c.AdminToken == "" {
		if c.AdminToken, err = auth.RotateAdminToken(ctx, q); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// writeFile writes the credentials readable by the owner only, atomically.
func writeFile(path string, c *Credentials) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+FileName+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Read loads a credentials file (for tests and tools).
func Read(path string) (*Credentials, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c Credentials
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if c.App.ClientID == "" {
		return nil, errors.New(path + ": no app in the credentials")
	}
	return &c, nil
}
