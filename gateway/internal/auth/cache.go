package auth

import (
	"context"
	"sync"
	"time"

	"github.com/svcplatform/svc/gateway/internal/identity"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// maxCached bounds a cache's memory: past it, the cache starts afresh.
// Losing entries only costs a query each.
const maxCached = 1 << 16

// ttlCache remembers what a query answered for a key until a deadline (at
// most ttl after it was read), and lets the requests that miss the same key
// at the same time share one query: when an entry expires under load, or the
// gateway has just started, a burst of requests presenting one credential or
// asking about one Page costs one query, not one each.
//
// A forget is seen by every request that starts after it: it drops the
// matching entries, and the queries then under way are neither joined by
// later requests nor kept (they may have read the database before the change
// the forget is for). The requests already waiting on such a query take its
// answer, as they would have had they been a little faster.
type ttlCache[K comparable, V any] struct {
	ttl time.Duration

	mu      sync.RWMutex
	m       map[K]cached[V]
	gen     uint64 // counts forgets; a fill begun before one is not kept
	flights map[K]*flight[V]
}

type cached[V any] struct {
	v     V
	until time.Time
}

// flight is one query under way for a key; done closes when it ends.
type flight[V any] struct {
	done chan struct{}
	v    V
	err  error
}

func newTTLCache[K comparable, V any](ttl time.Duration) *ttlCache[K, V] {
	return &ttlCache[K, V]{ttl: ttl, m: make(map[K]cached[V]), flights: make(map[K]*flight[V])}
}

func (c *ttlCache[K, V]) get(k K, now time.Time) (V, bool) {
	if c.ttl <= 0 {
		var zero V
		return zero, false
	}
	c.mu.RLock()
	e, ok := c.m[k]
	c.mu.RUnlock()
	if !ok || !now.Before(e.until) {
		var zero V
		return zero, false
	}
	return e.v, true
}

// fill answers k from the cache, or else from load, whose answer is kept
// until the time it returns (never more than ttl after now). Requests that
// miss k while another's load runs wait for that load and share its answer;
// if it failed, each runs its own, so that one request's cancelled context
// or failed query is not another's error (and a waiter whose own context
// ends stops waiting). With a ttl of 0 nothing is cached
// or shared.
func (c *ttlCache[K, V]) fill(ctx context.Context, k K, now time.Time, load func() (V, time.Time, error)) (V, error) {
	if c.ttl <= 0 {
		v, _, err := load()
		return v, err
	}
	c.mu.Lock()
	if e, ok := c.m[k]; ok && now.Before(e.until) {
		c.mu.Unlock()
		return e.v, nil
	}
	gen := c.gen
	if f, ok := c.flights[k]; ok {
		c.mu.Unlock()
		select {
		case <-f.done:
			if f.err == nil {
				return f.v, nil
			}
		case <-ctx.Done(): // load fails as a query with this context does
		}
		v, until, err := load()
		if err == nil {
			c.mu.Lock()
			c.keep(k, v, gen, now, until)
			c.mu.Unlock()
		}
		return v, err
	}
	f := &flight[V]{done: make(chan struct{})}
	c.flights[k] = f
	c.mu.Unlock()

	v, until, err := load()
	f.v, f.err = v, err

	c.mu.Lock()
	if c.flights[k] == f {
		delete(c.flights, k)
	}
	if err == nil {
		c.keep(k, v, gen, now, until)
	}
	c.mu.Unlock()
	close(f.done)
	return v, err
}

// keep caches v, read at now for a request that began when the forgets
// numbered gen, unless a forget came since. c.mu is held.
func (c *ttlCache[K, V]) keep(k K, v V, gen uint64, now, until time.Time) {
	if c.gen != gen {
		return
	}
	if limit := now.Add(c.ttl); until.IsZero() || until.After(limit) {
		until = limit
	}
	if len(c.m) >= maxCached {
		c.m = make(map[K]cached[V])
	}
	c.m[k] = cached[V]{v: v, until: until}
}

// forget drops every entry whose key or value matches, and stops the
// queries under way from being joined or kept.
func (c *ttlCache[K, V]) forget(match func(K, V) bool) {
	c.mu.Lock()
	c.gen++
	clear(c.flights)
	for k, e := range c.m {
		if match(k, e.v) {
			delete(c.m, k)
		}
	}
	c.mu.Unlock()
}

// credentialCache remembers recently authenticated credentials by hash; the
// principal is shared by the requests that present the credential.
type credentialCache = ttlCache[[32]byte, *Principal]

func newCredentialCache(ttl time.Duration) *credentialCache {
	return newTTLCache[[32]byte, *Principal](ttl)
}

// factsCache remembers Page facts per (Page, user, app) for the same bound
// as credentials, so that a burst of calls on one Page costs one query.
type factsCache = ttlCache[factsKey, cachedFacts]

type factsKey struct{ page, user, app string }

type cachedFacts struct {
	f identity.PageFacts
	// wire is f as the gateway sends it with a call on the Page, made once
	// per fill and shared by the calls: never modified.
	wire *pluginv1.PageAccessResponse
}

// factsOf is the cache entry of f, the facts of pageID.
func factsOf(pageID string, f identity.PageFacts) cachedFacts {
	w := f.Proto()
	w.PageId = pageID
	return cachedFacts{f: f, wire: w}
}

func newFactsCache(ttl time.Duration) *factsCache {
	return newTTLCache[factsKey, cachedFacts](ttl)
}
