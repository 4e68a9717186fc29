// Package serving holds what the gateway's port (package server) tells
// the code behind it about the requests it serves: the largest body it lets
// through, and the signal that it has begun to shut down. It sits below
// every package that serves a request so that they can read these without
// importing the server, and it must not import any gateway package.
package serving

import "context"

// MaxBodyBytes is the largest request body accepted (CONTRACT §1): the
// server refuses a longer one before any handler reads it.
const MaxBodyBytes = 1 << 20

// closingKey carries, in every request's context, a context cancelled when
// the server starts its graceful shutdown.
type closingKey struct{}

// WithClosing returns ctx carrying closing, a context cancelled when the
// server serving ctx's requests starts to shut down. The server sets it on
// its base context: no cost per request.
func WithClosing(ctx, closing context.Context) context.Context {
	return context.WithValue(ctx, closingKey{}, closing)
}

// ShuttingDown returns a channel closed when the server serving ctx's
// request starts to shut down (nil, never closed, outside a serving
// server). A graceful shutdown waits for requests in flight, so calls that
// would otherwise last as long as the client wants (a device's card stream)
// end themselves when it closes, and the client reconnects to another
// gateway.
func ShuttingDown(ctx context.Context) <-chan struct{} {
	if c := Closing(ctx); c != nil {
		return c.Done()
	}
	return nil
}

// Closing returns a context cancelled when the server serving ctx's
// request starts to shut down (nil outside a serving server), for
// context.AfterFunc: a call can end itself at the shutdown without a
// goroutine to wait for it.
func Closing(ctx context.Context) context.Context {
	c, _ := ctx.Value(closingKey{}).(context.Context)
	return c
}
