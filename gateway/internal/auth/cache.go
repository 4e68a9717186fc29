package auth

import (
	"sync"
	"time"

	"github.com/svcplatform/svc/gateway/internal/identity"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// maxCached bounds the cache's memory: past it, the cache starts afresh.
// Losing entries only costs a query each.
const maxCached = 1 << 16

// credentialCache remembers recently authenticated credentials by hash.
type credentialCache struct {
	ttl time.Duration
	mu  sync.RWMutex
	m   map[string]cachedPrincipal
}

type cachedPrincipal struct {
	p     *Principal // shared by the requests that present the credential
	until time.Time
}

func newCredentialCache(ttl time.Duration) *credentialCache {
	return &credentialCache{ttl: ttl, m: make(map[string]cachedPrincipal)}
}

func (c *credentialCache) get(hash []byte, now time.Time) (*Principal, bool) {
	if c.ttl <= 0 {
		return nil, false
	}
	c.mu.RLock()
	e, ok := c.m[string(hash)]
	c.mu.RUnlock()
	if !ok || !now.Before(e.until) {
		return nil, false
	}
	return e.p, true
}

func (c *credentialCache) put(hash []byte, p *Principal, now time.Time) {
	if c.ttl <= 0 {
		return
	}
	until := now.Add(c.ttl)
	if !p.ExpiresAt.IsZero() && p.ExpiresAt.Before(until) {
		until = p.ExpiresAt
	}
	c.mu.Lock()
	if len(c.m) >= maxCached {
		c.m = make(map[string]cachedPrincipal)
	}
	c.m[string(hash)] = cachedPrincipal{p: p, until: until}
	c.mu.Unlock()
}

func (c *credentialCache) forget(hashes ...[]byte) {
	c.mu.Lock()
	for _, h := range hashes {
		delete(c.m, string(h))
	}
	c.mu.Unlock()
}

// forgetUser drops every entry whose principal acts for userID.
func (c *credentialCache) forgetUser(userID string) {
	c.mu.Lock()
	for k, e := range c.m {
		if e.p.UserID == userID {
			delete(c.m, k)
		}
	}
	c.mu.Unlock()
}

// forgetApp drops every entry whose principal acts for appID.
func (c *credentialCache) forgetApp(appID string) {
	c.mu.Lock()
	for k, e := range c.m {
		if e.p.AppID == appID {
			delete(c.m, k)
		}
	}
	c.mu.Unlock()
}

// factsCache remembers Page facts per (Page, user, app) for the same bound
// as credentials, so that a burst of calls on one Page costs one query.
type factsCache struct {
	ttl time.Duration
	mu  sync.RWMutex
	m   map[factsKey]cachedFacts
}

type factsKey struct{ page, user, app string }

type cachedFacts struct {
	f identity.PageFacts
	// wire is f as the gateway sends it with a call on the Page, made once
	// per fill and shared by the calls: never modified.
	wire  *pluginv1.PageAccessResponse
	until time.Time
}

// factsOf is the cache entry of f, the facts of pageID.
func factsOf(pageID string, f identity.PageFacts) cachedFacts {
	w := f.Proto()
	w.PageId = pageID
	return cachedFacts{f: f, wire: w}
}

func newFactsCache(ttl time.Duration) *factsCache {
	return &factsCache{ttl: ttl, m: make(map[factsKey]cachedFacts)}
}

func (c *factsCache) get(k factsKey, now time.Time) (cachedFacts, bool) {
	if c.ttl <= 0 {
		return cachedFacts{}, false
	}
	c.mu.RLock()
	e, ok := c.m[k]
	c.mu.RUnlock()
	if !ok || !now.Before(e.until) {
		return cachedFacts{}, false
	}
	return e, true
}

func (c *factsCache) put(k factsKey, e cachedFacts, now time.Time) {
	if c.ttl <= 0 {
		return
	}
	e.until = now.Add(c.ttl)
	c.mu.Lock()
	if len(c.m) >= maxCached {
		c.m = make(map[factsKey]cachedFacts)
	}
	c.m[k] = e
	c.mu.Unlock()
}

// forgetPage drops every entry of pageID.
func (c *factsCache) forgetPage(pageID string) {
	c.forget(func(k factsKey) bool { return k.page == pageID })
}

// forgetUser drops every entry asked for userID (their Pages as one of
// their apps sees them follow the Pages they chose for it).
func (c *factsCache) forgetUser(userID string) {
	c.forget(func(k factsKey) bool { return k.user == userID })
}

func (c *factsCache) forget(match func(factsKey) bool) {
	c.mu.Lock()
	for k := range c.m {
		if match(k) {
			delete(c.m, k)
		}
	}
	c.mu.Unlock()
}
