package host

import (
	"strconv"
	"sync"

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
	mu    sync.Mutex
	last  uint64
	calls map[uint64]delegated // by handle
}

type delegated struct {
	plugin    string
	principal *pluginv1.Principal
}

// open registers req's principal for plugin and sets req's handle; close
// with the handle it returns ends the delegation when the call returns.
// (A map under a mutex, not a sync.Map: storing into that boxed the key
// and the entry, four allocations per call with the closure it returned.)
func (d *delegations) open(plugin string, req *pluginv1.InvokeRequest) uint64 {
	d.mu.Lock()
	d.last++
	handle := d.last
	if d.calls == nil {
		d.calls = make(map[uint64]delegated)
	}
	d.calls[handle] = delegated{plugin: plugin, principal: req.GetPrincipal()}
	d.mu.Unlock()
	req.Delegation = strconv.FormatUint(handle, 36)
	return handle
}

// close ends the delegation of handle.
func (d *delegations) close(handle uint64) {
	d.mu.Lock()
	delete(d.calls, handle)
	d.mu.Unlock()
}

// principal is whom plugin acts as when its Host call presents handle.
func (d *delegations) principal(plugin, handle string) *pluginv1.Principal {
	if n, err := strconv.ParseUint(handle, 36, 64); err == nil && canonicalHandle(handle, n) {
		d.mu.Lock()
		dg, ok := d.calls[n]
		d.mu.Unlock()
		if ok && dg.plugin == plugin {
			return dg.principal
		}
	}
	return &pluginv1.Principal{TokenKind: pluginv1.TokenKind_TOKEN_KIND_PLUGIN, Plugin: plugin}
}

// canonicalHandle reports whether handle is n written as open writes it,
// so that one handle has one spelling.
func canonicalHandle(handle string, n uint64) bool {
	var buf [16]byte
	return string(strconv.AppendUint(buf[:0], n, 36)) == handle
}
