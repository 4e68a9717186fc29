package oauth

import (
	"context"
	"sync"
	"time"

	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/identity"
)

// clientCacheMax bounds the apps remembered; past it the cache starts over.
const clientCacheMax = 4096

// clientCache remembers, for auth.DefaultCacheTTL, the apps whose clients
// authenticated at the token, revocation and introspection endpoints, so
// that a code exchange is one round trip to PostgreSQL (the redemption)
// rather than two. A secret that does not match the remembered app is
// checked against the database again, so a new secret works at once and a
// wrong one costs what it cost before. A secret set or rotated through this
// gateway drops what was read before it (identity.Apps.SecretGeneration),
// so a replaced secret stops at once here; on the other gateways, as an app
// deleted, within the bound every revocation is stated against
// (auth.DefaultCacheTTL). A deleted app's codes and tokens
// are gone with it, so nothing can be redeemed for it meanwhile.
type clientCache struct {
	mu   sync.Mutex
	apps map[string]cachedClient
}

type cachedClient struct {
	app identity.App
	at  time.Time // when it was read; monotonic, not the server's clock
	gen uint64    // identity.Apps.SecretGeneration before it was read
}

// authenticate returns the app with clientID if secret is its client
// secret; ok is false when it is not (or there is no such client).
func (c *clientCache) authenticate(ctx context.Context, apps *identity.Apps, clientID, secret string) (app identity.App, ok bool, err error) {
	c.mu.Lock()
	e, hit := c.apps[clientID]
	c.mu.Unlock()
	gen := apps.SecretGeneration()
	if hit && e.gen == gen && time.Since(e.at) < auth.DefaultCacheTTL && e.app.CheckClientSecret(secret) {
		return e.app, true, nil
	}
	at := time.Now()
	app, err = apps.AppByClientID(ctx, clientID)
	if err != nil {
		c.forget(clientID)
		return identity.App{}, false, err
	}
	if !app.CheckClientSecret(secret) {
		return app, false, nil
	}
	c.mu.Lock()
	if c.apps == nil || len(c.apps) >= clientCacheMax {
		c.apps = make(map[string]cachedClient)
	}
	c.apps[clientID] = cachedClient{app: app, at: at, gen: gen}
	c.mu.Unlock()
	return app, true, nil
}

func (c *clientCache) forget(clientID string) {
	c.mu.Lock()
	delete(c.apps, clientID)
	c.mu.Unlock()
}
