package host

import (
	"strconv"
	"sync"
	"sync/atomic"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// delegations lets a plugin act, in its calls back to the Host service, as
// the principal of a call it is serving, and as nothing else: the gateway
// hands each call an opaque handle (InvokeRequest.delegation) and keeps the
// call's principal under it until the call ends. A Host call that presents a
// live handle of the same plugin acts as that principal; any other acts as
// the plugin itself (TOKEN_KIND_PLUGIN). The principal a plugin writes into
// its Host call is never read.
type delegations struct {
	next  atomic.Uint64
	calls sync.Map // handle → delegated
}

type delegated struct {
	plugin    string
	principal *pluginv1.Principal
}

// open registers req's principal for plugin and sets req's handle; the
// returned function ends the delegation when the call returns.
func (d *delegations) open(plugin string, req *pluginv1.InvokeRequest) func() {
	handle := strconv.FormatUint(d.next.Add(1), 36)
	d.calls.Store(handle, delegated{plugin: plugin, principal: req.GetPrincipal()})
	req.Delegation = handle
	return func() { d.calls.Delete(handle) }
}

// principal is whom plugin acts as when its Host call presents handle.
func (d *delegations) principal(plugin, handle string) *pluginv1.Principal {
	if handle != "" {
		if v, ok := d.calls.Load(handle); ok {
			if dg := v.(delegated); dg.plugin == plugin {
				return dg.principal
			}
		}
	}
	return &pluginv1.Principal{TokenKind: pluginv1.TokenKind_TOKEN_KIND_PLUGIN, Plugin: plugin}
}
