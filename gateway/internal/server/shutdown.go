package server

import "context"

// shutdownKey carries, in every request's context, a context cancelled
// when the server starts its graceful shutdown.
type shutdownKey struct{}

// ShuttingDown returns a channel closed when the server serving ctx's
// request starts to shut down (nil, never closed, outside ListenAndServe).
// A graceful shutdown waits for requests in flight, so calls that would
// otherwise last as long as the client wants (a device's card stream) end
// themselves when it closes, and the client reconnects to another gateway.
func ShuttingDown(ctx context.Context) <-chan struct{} {
	if c := Closing(ctx); c != nil {
		return c.Done()
	}
	return nil
}

// Closing returns a context cancelled when the server serving ctx's
// request starts to shut down (nil outside ListenAndServe), for
// context.AfterFunc: a call can end itself at the shutdown without a
// goroutine to wait for it.
func Closing(ctx context.Context) context.Context {
	c, _ := ctx.Value(shutdownKey{}).(context.Context)
	return c
}
