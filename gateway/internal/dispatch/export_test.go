package dispatch

import "github.com/svcplatform/svc/gateway/internal/route"

// Publish publishes a table of sources alone, as Rebuild does with the
// core's and the host's: for tests that serve a plugin their own way.
func (d *Dispatcher) Publish(sources ...route.Source) error { return d.publish(sources) }
