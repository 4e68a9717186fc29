package auth

import (
	"sync"
	"time"

	"github.com/svcplatform/svc/gateway/internal/identity"
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
	p     Principal
	until time.Time
}

func newCredentialCache(ttl time.Duration) *credentialCache {
	return &credentialCache{ttl: ttl, m: make(map[string]cachedPrincipal)}
}

func (c *credentialCache) get(hash []byte, now time.Time) (Principal, bool) {
	if c.ttl <= 0 {
		return Principal{}, false
	}
	c.mu.RLock()
	e, ok := c.m[string(hash)]
	c.mu.RUnlock()
	if !ok || !now.Before(e.until) {
		return Principal{}, false
	}
	return e.p, true
}

func (c *credentialCache) put(hash []byte, p Principal, now time.Time) {
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

// factsCache remembers Page facts per (Page, user, app) for the same bound
// as credentials, so that a burst of calls on one Page costs one query.
type factsCache struct {
	ttl time.Duration
	mu  sync.RWMutex
	m   map[factsKey]cachedFacts
}

type factsKey struct{ page, user, app string }

type cachedFacts struct {
	f     identity.PageFacts
	until time.Time
}

func newFactsCache(ttl time.Duration) *factsCache {
	return &factsCache{ttl: ttl, m: make(map[factsKey]cachedFacts)}
}

func (c *factsCache) get(k factsKey, now time.Time) (identity.PageFacts, bool) {
	if c.ttl <= 0 {
		return identity.PageFacts{}, false
	}
	c.mu.RLock()
	e, ok := c.m[k]
	c.mu.RUnlock()
	if !ok || !now.Before(e.until) {
		return identity.PageFacts{}, false
	}
	return e.f, true
}

func (c *factsCache) put(k factsKey, f identity.PageFacts, now time.Time) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	if len(c.m) >= maxCached {
		c.m = make(map[factsKey]cachedFacts)
	}
	c.m[k] = cachedFacts{f: f, until: now.Add(c.ttl)}
	c.mu.Unlock()
}

// forgetPage drops every entry of pageID.
func (c *factsCache) forgetPage(pageID string) {
	c.mu.Lock()
	for k := range c.m {
		if k.page == pageID {
			delete(c.m, k)
		}
	}
	c.mu.Unlock()
}
