package protocol

import (
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// requestDecoder decodes a connection's calls as proto.Unmarshal does, but
// by hand and without a new string for a value the connection's previous
// call carried in the same place: the procedure, the principal's ids and
// scopes and the Page's facts repeat from call to call, and each was a
// string to allocate and check for UTF-8, and each repeated field a slice
// grown element by element (issue 34: about a third of a plugin's
// allocations per Graph read). Strings are immutable, so sharing one with
// the previous call changes nothing a handler can see; messages and slices
// are new per call, as proto.Unmarshal's are.
//
// Anything it does not know (an unknown field, a field sent twice where
// that merges messages, a refusal in the Page's facts, a wire type out of
// place, invalid UTF-8) makes decode fall back to proto.Unmarshal for the
// whole call, so the result is always proto.Unmarshal's.
type requestDecoder struct {
	procedure, userID, appID, plugin       string
	scopes, pageChoice, appProducts        []string
	pageName, assistantLabel, accessPageID string
}

// decode decodes body into req (reset first) and reports whether it could;
// when it could not, req holds a partial decoding and the caller
// unmarshals body with proto.Unmarshal.
func (d *requestDecoder) decode(body []byte, req *pluginv1.InvokeRequest) bool {
	req.Reset()
	seen := uint16(0) // the message fields met, which must not repeat
	for len(body) > 0 {
		num, typ, n := protowire.ConsumeTag(body)
		if n < 0 {
			return false
		}
		body = body[n:]
		switch {
		case typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(body)
			if n < 0 {
				return false
			}
			body = body[n:]
			var ok bool
			switch num {
			case 1:
				req.Procedure, ok = same(&d.procedure, v)
			case 2:
				req.Request, ok = append([]byte{}, v...), true
			case 3:
				if seen&(1<<3) != 0 {
					return false
				}
				seen |= 1 << 3
				req.Principal, ok = d.principal(v)
			case 4:
				req.TraceId, ok = fresh(v)
			case 7:
				req.Delegation, ok = fresh(v)
			case 9:
				req.Traceparent, ok = fresh(v)
			case 10:
				if seen&(1<<10) != 0 {
					return false
				}
				seen |= 1 << 10
				req.PageAccess, ok = d.pageAccess(v)
			}
			if !ok {
				return false
			}
		case typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(body)
			if n < 0 {
				return false
			}
			body = body[n:]
			switch num {
			case 5:
				req.DeadlineUnixNano = int64(v)
			case 6:
				req.CallId = v
			case 8:
				req.ReadReplica = v != 0
			default:
				return false
			}
		default:
			return false
		}
	}
	return true
}

// principal decodes a Principal.
func (d *requestDecoder) principal(b []byte) (*pluginv1.Principal, bool) {
	p := new(pluginv1.Principal)
	ok, choice := false, false
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, false
		}
		b = b[n:]
		switch {
		case typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, false
			}
			b = b[n:]
			switch num {
			case 2:
				p.UserId, ok = same(&d.userID, v)
			case 3:
				p.AppId, ok = same(&d.appID, v)
			case 4:
				var s string
				s, ok = sameAt(d.scopes, len(p.Scopes), v)
				p.Scopes = appendSized(p.Scopes, len(d.scopes), s)
			case 7:
				p.Plugin, ok = same(&d.plugin, v)
			case 8:
				if choice {
					return nil, false
				}
				choice = true
				p.PageChoice, ok = d.choice(v)
			default:
				return nil, false
			}
			if !ok {
				return nil, false
			}
		case typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return nil, false
			}
			b = b[n:]
			switch num {
			case 1:
				p.TokenKind = pluginv1.TokenKind(int32(v))
			case 5:
				p.Live = v != 0
			case 6:
				p.Staff = v != 0
			default:
				return nil, false
			}
		default:
			return nil, false
		}
	}
	d.scopes = p.Scopes
	return p, true
}

// choice decodes a PageChoice.
func (d *requestDecoder) choice(b []byte) (*pluginv1.PageChoice, bool) {
	c := new(pluginv1.PageChoice)
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || num != 1 || typ != protowire.BytesType {
			return nil, false
		}
		b = b[n:]
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return nil, false
		}
		b = b[n:]
		s, ok := sameAt(d.pageChoice, len(c.PageIds), v)
		if !ok {
			return nil, false
		}
		c.PageIds = appendSized(c.PageIds, len(d.pageChoice), s)
	}
	d.pageChoice = c.PageIds
	return c, true
}

// pageAccess decodes a PageAccessResponse without a refusal (one with a
// refusal falls back: it carries an Error and its GraphError).
func (d *requestDecoder) pageAccess(b []byte) (*pluginv1.PageAccessResponse, bool) {
	a := new(pluginv1.PageAccessResponse)
	ok := false
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, false
		}
		b = b[n:]
		switch {
		case typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, false
			}
			b = b[n:]
			switch num {
			case 4:
				var s string
				s, ok = sameAt(d.appProducts, len(a.AppProducts), v)
				a.AppProducts = appendSized(a.AppProducts, len(d.appProducts), s)
			case 7:
				a.PageName, ok = same(&d.pageName, v)
			case 9:
				a.AssistantLabel, ok = same(&d.assistantLabel, v)
			case 12:
				a.PageId, ok = same(&d.accessPageID, v)
			default:
				return nil, false
			}
			if !ok {
				return nil, false
			}
		case typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return nil, false
			}
			b = b[n:]
			switch num {
			case 1:
				a.PageExists = v != 0
			case 2:
				a.UserRole = pluginv1.PageRole(int32(v))
			case 3:
				a.AppLinked = v != 0
			case 5:
				a.Published = v != 0
			case 6:
				a.ChatSurfacing = v != 0
			case 8:
				a.InboxAutomation = v != 0
			case 10:
				a.InboxMergeLinked = v != 0
			case 11:
				a.HandoverTimeout = int32(v)
			default:
				return nil, false
			}
		default:
			return nil, false
		}
	}
	d.appProducts = a.AppProducts
	return a, true
}

// same returns v as a string, *prev itself when it holds the same bytes
// (no allocation), and remembers it; false for invalid UTF-8.
func same(prev *string, v []byte) (string, bool) {
	if string(v) == *prev {
		return *prev, true
	}
	s, ok := fresh(v)
	if ok {
		*prev = s
	}
	return s, ok
}

// sameAt is same against prev[i], for the elements of a repeated field.
func sameAt(prev []string, i int, v []byte) (string, bool) {
	if i < len(prev) && string(v) == prev[i] {
		return prev[i], true
	}
	return fresh(v)
}

// fresh returns v as a new string; false for invalid UTF-8, which
// proto.Unmarshal refuses in a proto3 string.
func fresh(v []byte) (string, bool) {
	if !utf8.Valid(v) {
		return "", false
	}
	return string(v), true
}

// appendSized appends s to list, made the size of the last call's list
// first (a repeated field's length seldom changes from call to call).
func appendSized(list []string, last int, s string) []string {
	if list == nil {
		list = make([]string, 0, max(last, 1))
	}
	return append(list, s)
}
