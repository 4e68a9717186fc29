package sdk

import (
	"log/slog"

	"github.com/svcplatform/svc/internal/plugin/pluginrt"
)

// Call is what a handler knows of the call it serves, beyond the request.
type Call pluginrt.Call

func (c *Call) rt() *pluginrt.Call { return (*pluginrt.Call)(c) }

// Procedure returns the called method, "/package.Service/Method".
func (c *Call) Procedure() string { return c.rt().Procedure() }

// Principal returns the caller, authorized by the gateway for this method.
func (c *Call) Principal() Principal { return principalFromProto(c.rt().Principal()) }

// PageAccess returns what the gateway knew of the Page pageID for this
// call's caller when it authorized the call (the Page the method's access
// rule names), so that a handler need not ask the host again; ok is false
// when the gateway sent no facts of that Page, and then
// Host().PageAccess asks. The facts are at most as old as the gateway's
// credential cache (2 s) and fresh after a change made through that
// gateway.
func (c *Call) PageAccess(pageID string) (a *PageAccess, ok bool) {
	page := c.rt().PageAccess()
	if page == nil || !page.GetPageExists() || page.GetPageId() != pageID {
		return nil, false
	}
	return pageAccessFromProto(page), true
}

// AfterAnswer has f run once the call's answer is encoded (for a stream:
// once the stream has ended), or the call has failed, so that a handler
// may build its answer from memory it reuses and take it back in f;
// nothing reads the answer's message after f. f replaces an earlier one.
func (c *Call) AfterAnswer(f func()) { c.rt().AfterAnswer(f) }

// TraceID returns the request's trace id, the fbtrace_id the caller sees in
// errors.
func (c *Call) TraceID() string { return c.rt().TraceID() }

// Logger returns the plugin's logger with the call's trace id and procedure.
func (c *Call) Logger() *slog.Logger { return c.rt().Logger() }

// Host returns a client of the gateway's Host service that acts for this
// call's caller, while the call lasts, and carries its trace id. The
// gateway applies the called method's access rule to that caller. After
// the call has returned (work a handler left running), the client acts as
// the plugin itself, as Plugin.Host does.
func (c *Call) Host() *HostClient { return (*HostClient)(c.rt().Host()) }
