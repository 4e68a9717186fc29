package identity

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svcplatform/svc/gateway/internal/coredb"
)

// The gateway's own scopes (CONTRACT §4, plus openid for OIDC). Every
// other scope is declared by the plugin that introduces it (the scopes
// option of svc/plugin/v1/options.proto) and recorded in
// core.plugin_scopes (DeclareScopes).
const (
	ScopeOpenID        = "openid"
	ScopePublicProfile = "public_profile"
	ScopePagesRead     = "pages:read"
	ScopePagesManage   = "pages:manage"
)

// ScopeTier is how App Review treats a scope.
type ScopeTier string

// Review tiers. A later tier may ask for a verified business (CONTRACT
// §17); none does yet.
const (
	// TierProtocol scopes need no review at all (openid).
	TierProtocol ScopeTier = "protocol"
	// TierBasic scopes pass App Review automatically at score
	// AutoReviewMinScore.
	TierBasic ScopeTier = "basic"
	// TierAdvanced scopes wait for staff.
	TierAdvanced ScopeTier = "advanced"
)

// Scope is one scope of the catalog: its name, its plain-words
// description on the consent page, how App Review treats it, and the
// plugin that declared it ("" for the gateway's own).
type Scope struct {
	Name        string
	Description string
	Tier        ScopeTier
	Plugin      string
	// Pages: the scope acts on the person's Pages (pages:read, and a
	// declared scope some Page-scoped method of its plugin needs). The
	// consent page then asks which Pages, and debug_token lists the choice
	// as the scope's granular_scopes (CONTRACT §17).
	Pages bool
}

// coreScopes are the gateway's own scopes, in discovery order.
var coreScopes = []Scope{
	{Name: ScopeOpenID, Description: "Confirm who you are (your account id)", Tier: TierProtocol},
	{Name: ScopePublicProfile, Description: "See your name", Tier: TierBasic},
	{Name: ScopePagesRead, Description: "See the Pages you manage and their posts", Tier: TierBasic, Pages: true},
	{Name: ScopePagesManage, Description: "Publish posts and change settings on the Pages you manage", Tier: TierAdvanced, Pages: true},
}

// CoreScopes lists the gateway's own scopes, in discovery order.
func CoreScopes() []string {
	out := make([]string, len(coreScopes))
	for i, sc := range coreScopes {
		out[i] = sc.Name
	}
	return out
}

// Scopes is the catalog at one moment: the gateway's own scopes, then
// those plugins declared, by name. It is immutable.
type Scopes struct {
	list []Scope
	by   map[string]Scope
}

func newScopes(declared []Scope) *Scopes {
	c := &Scopes{list: slices.Clone(coreScopes), by: make(map[string]Scope, len(coreScopes)+len(declared))}
	for _, sc := range coreScopes {
		c.by[sc.Name] = sc
	}
	slices.SortFunc(declared, func(a, b Scope) int { return strings.Compare(a.Name, b.Name) })
	for _, sc := range declared {
		if _, dup := c.by[sc.Name]; dup {
			continue
		}
		c.by[sc.Name] = sc
		c.list = append(c.list, sc)
	}
	return c
}

// All lists every scope: the gateway's own, then the declared ones by name
// (for discovery and App Review).
func (c *Scopes) All() []string {
	out := make([]string, len(c.list))
	for i, sc := range c.list {
		out[i] = sc.Name
	}
	return out
}

// Known reports whether scope exists.
func (c *Scopes) Known(scope string) bool { _, ok := c.by[scope]; return ok }

// Description is the scope in plain words, for the consent page.
func (c *Scopes) Description(scope string) string { return c.by[scope].Description }

// Basic reports whether App Review approves scope automatically (at score
// AutoReviewMinScore or more) rather than by staff.
func (c *Scopes) Basic(scope string) bool { return c.by[scope].Tier == TierBasic }

// PageScope reports whether scope acts on the person's Pages (Scope.Pages).
func (c *Scopes) PageScope(scope string) bool { return c.by[scope].Pages }

// PageScopes are those of scopes that act on the person's Pages, in order.
func (c *Scopes) PageScopes(scopes []string) []string {
	var out []string
	for _, sc := range scopes {
		if c.PageScope(sc) {
			out = append(out, sc)
		}
	}
	return out
}

// Protocol reports whether scope needs no App Review at all.
func (c *Scopes) Protocol(scope string) bool { return c.by[scope].Tier == TierProtocol }

// Parse splits a space-separated scope parameter (RFC 6749 §3.3),
// dropping duplicates and sorting, and refuses unknown scopes.
func (c *Scopes) Parse(param string) ([]string, error) {
	var out []string
	for _, s := range strings.Fields(param) {
		if !c.Known(s) {
			return nil, fmt.Errorf("unknown scope %q: %w", s, ErrInvalid)
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// scopesTTL is how long a gateway serves the catalog before reading
// core.plugin_scopes again: a scope a plugin declared through another
// gateway is known here within it.
const scopesTTL = 2 * time.Second

// scopeCache holds the catalog a Service serves: core.plugin_scopes read
// at most every scopesTTL, plus the scopes this gateway's plugins declared
// (known at once, even before or without the write).
type scopeCache struct {
	cur atomic.Pointer[cachedScopes]
	// loading lets one caller read the table when the catalog is stale;
	// the others serve the stale one meanwhile.
	loading sync.Mutex
	mu      sync.Mutex
	local   map[string]Scope
}

type cachedScopes struct {
	scopes *Scopes
	// db are the rows read; until, when to read them again.
	db    []Scope
	until time.Time
}

// Scopes is the scope catalog: the gateway's own scopes and those every
// plugin of the installation declared, read from the database at most
// every 2 seconds. A declared scope stays in the catalog when its plugin
// stops or goes. When the database cannot be read, the last catalog read
// is served; the error is returned only when there is none.
func (s *store) Scopes(ctx context.Context) (*Scopes, error) {
	c := s.env.scopes
	cur := c.cur.Load()
	now := time.Now()
	if cur != nil && now.Before(cur.until) {
		return cur.scopes, nil
	}
	if cur != nil && !c.loading.TryLock() {
		return cur.scopes, nil
	}
	if cur == nil {
		c.loading.Lock()
		if cur = c.cur.Load(); cur != nil && now.Before(cur.until) {
			c.loading.Unlock()
			return cur.scopes, nil
		}
	}
	defer c.loading.Unlock()
	rows, err := coredb.New(s.pool).ListPluginScopes(ctx)
	if err != nil {
		if cur != nil {
			slog.Warn("identity: reading the declared scopes; serving the last ones read", "err", err)
			return cur.scopes, nil
		}
		return nil, fmt.Errorf("declared scopes: %w", err)
	}
	db := make([]Scope, 0, len(rows))
	for _, r := range rows {
		db = append(db, Scope{Name: r.Name, Description: r.Description, Tier: ScopeTier(r.Review), Plugin: r.Plugin,
			Pages: r.Pages})
	}
	next := &cachedScopes{db: db, until: time.Now().Add(scopesTTL)}
	next.scopes = c.build(db)
	c.cur.Store(next)
	return next.scopes, nil
}

// build merges rows read from the database with the scopes declared here.
func (c *scopeCache) build(db []Scope) *Scopes {
	c.mu.Lock()
	defer c.mu.Unlock()
	all := slices.Clone(db)
	for _, sc := range c.local {
		if !slices.ContainsFunc(db, func(d Scope) bool { return d.Name == sc.Name }) {
			all = append(all, sc)
		}
	}
	return newScopes(all)
}

// DeclareScopes records the scopes plugin declares (each TierBasic or
// TierAdvanced), in core.plugin_scopes for every gateway of the
// installation and at once in this gateway's catalog. A scope already
// recorded for another plugin keeps its owner and description, and is
// reported in the error; a scope is never removed.
func (s *store) DeclareScopes(ctx context.Context, plugin string, scopes []Scope) error {
	c := s.env.scopes
	c.mu.Lock()
	for _, sc := range scopes {
		if _, ok := c.local[sc.Name]; !ok || c.local[sc.Name].Plugin == plugin {
			sc.Plugin = plugin
			c.local[sc.Name] = sc
		}
	}
	c.mu.Unlock()
	var taken []string
	for _, sc := range scopes {
		if sc.Tier != TierBasic && sc.Tier != TierAdvanced {
			return fmt.Errorf("scope %q: tier %q: %w", sc.Name, sc.Tier, ErrInvalid)
		}
		n, err := s.q.DeclarePluginScope(ctx, coredb.DeclarePluginScopeParams{Name: sc.Name, Plugin: plugin,
			Description: sc.Description, Review: string(sc.Tier), Pages: sc.Pages})
		if err != nil {
			return fmt.Errorf("declare scope %s: %w", sc.Name, err)
		}
		if n == 0 {
			taken = append(taken, sc.Name)
		}
	}
	// The next read merges the rows just written.
	if cur := c.cur.Load(); cur != nil {
		c.cur.Store(&cachedScopes{db: cur.db, scopes: c.build(cur.db)})
	}
	if len(taken) > 0 {
		return fmt.Errorf("scopes %s are another plugin's, not %s's: %w", strings.Join(taken, ", "), plugin, ErrInvalid)
	}
	return nil
}

// ContainsAll reports whether have holds every scope of want.
func ContainsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}
