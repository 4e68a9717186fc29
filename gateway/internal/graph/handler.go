package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/observe"
	"github.com/svcplatform/svc/gateway/internal/route"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
)

// Path is where the Graph endpoint is served.
const Path = "/api/v1/graph"

// Dispatcher runs the calls the Graph endpoint makes (dispatch.Dispatcher),
// so that a Graph call passes exactly the same validation and access
// checks as its Connect, gRPC and REST forms.
type Dispatcher interface {
	// Admit refuses a caller without a valid credential for a method that
	// is not public (nil access: any method), before anything of the
	// request is read.
	Admit(ctx context.Context, access *pluginv1.Access) error
	// CallInto validates, authorizes and invokes one call of m, reading
	// the answer into answer's capacity when it can.
	CallInto(ctx context.Context, m *route.Method, req proto.Message, raw, answer []byte) ([]byte, error)
	// Caller names the app and user making the request, for idempotency
	// keys and rate limits.
	Caller(ctx context.Context) (appID, userID string)
}

// Options configure the Graph endpoint.
type Options struct {
	// PublicURL is the base of the absolute paging URLs.
	PublicURL string
	// Dispatcher runs the calls.
	Dispatcher Dispatcher
	// Idempotency stores write results by Idempotency-Key; nil disables it.
	Idempotency IdempotencyStore
	// Limiter counts calls per app, user and Page; nil disables it.
	Limiter *Limiter
	// AccessToken resolves the access_token parameter, which stands in for
	// the Authorization header (auth.Authenticator.AccessToken), into the
	// request's context; nil leaves the parameter unread.
	AccessToken func(ctx context.Context, r *http.Request, token string) (context.Context, error)
}

// Handler serves the Graph endpoint.
type Handler struct {
	opts Options
	// linkPrefix is the start of every paging URL, PublicURL + Path + "?",
	// escaped for a JSON string.
	linkPrefix []byte
	// router is the node router of the route table in use, compiled with
	// it (Prepare), so a request never compiles one.
	router atomic.Pointer[Router]
}

// New returns the Graph handler. It serves once it has a route table:
// have the dispatcher it calls tell it of each (Prepare).
func New(opts Options) *Handler {
	prefix := appendJSONString(nil, strings.TrimRight(opts.PublicURL, "/")+Path+"?")
	h := &Handler{opts: opts, linkPrefix: prefix[1 : len(prefix)-1]}
	h.router.Store(NewRouter(&route.Table{}))
	return h
}

// Prepare compiles the node router of route table t; commit has the
// handler serve with it (dispatch.Follower).
func (h *Handler) Prepare(t *route.Table) (commit func(), err error) {
	r := NewRouter(t)
	return func() { h.router.Store(r) }, nil
}

// readBuffers are the buffers of a Graph call: the plugin's answer, read
// into it over the fast lane (Dispatcher.CallInto) instead of being copied
// out of the lane's own buffer, the document rendered from it, and a
// write's body. All live until ServeHTTP has written the document (net/http
// copies the bytes into its own buffer), so each call reuses them instead
// of allocating its answer's size twice; a buffer grown past maxPooledRead
// by a large answer or body is dropped. Nothing keeps the body's bytes: a
// write's strings and fields are copies (writeBody), and so is an
// idempotency fingerprint.
type readBuffers struct {
	answer, doc, body []byte
}

var readBufferPool = sync.Pool{New: func() any { return new(readBuffers) }}

const (
	maxPooledRead = 64 << 10
	// minAnswerBuffer is the first size of an answer buffer; it grows to
	// the answers it sees.
	minAnswerBuffer = 4 << 10
)

// release returns bufs to the pool once doc, the document rendered in it,
// is written.
func (bufs *readBuffers) release(doc []byte) {
	switch {
	case cap(doc) > maxPooledRead:
		bufs.doc = nil
	case doc != nil: // nil after a refusal: bufs.doc is unused
		bufs.doc = doc[:0]
	}
	if cap(bufs.answer) > maxPooledRead {
		bufs.answer = nil
	}
	if cap(bufs.body) > maxPooledRead {
		bufs.body = nil
	}
	readBufferPool.Put(bufs)
}

// ServeHTTP serves GET, POST and DELETE on the Graph endpoint.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var (
		status int
		body   []byte
		err    error
	)
	switch r.Method {
	case http.MethodGet, http.MethodDelete:
		bufs := readBufferPool.Get().(*readBuffers)
		q, pooled := parseQuery(r.URL.RawQuery)
		if r, err = h.withAccessToken(r, q, nil); err == nil {
			status, body, err = h.do(r.Context(), r.Method, q, nil, bufs)
		}
		defer releaseQuery(pooled)
		defer bufs.release(body)
	case http.MethodPost:
		// A write's body is read, and its document rendered, into pooled
		// buffers as a read's is; not an idempotent write's document,
		// which its store may keep.
		bufs := readBufferPool.Get().(*readBuffers)
		var pooled bool
		r, status, body, pooled, err = h.servePost(r, bufs)
		if pooled {
			defer bufs.release(body)
		} else {
			defer bufs.release(nil)
		}
	default:
		err = apierr.MethodNotAllowed(r.Method)
	}
	if h.opts.Limiter != nil {
		if app, _ := h.caller(r.Context()); app != "" {
			w.Header()["X-App-Usage"] = appUsage(h.opts.Limiter.Usage(app))
		}
	}
	if err != nil {
		apierr.Write(w, r, err)
		return
	}
	apierr.WriteJSONBody(w, status, body)
}

// servePost reads a write or batch body and runs it, honouring
// Idempotency-Key. It returns r with the context of its access_token, if
// it has one. pooled reports whether the document is the request's own to
// release with bufs (it is not an idempotency store's).
func (h *Handler) servePost(r *http.Request, bufs *readBuffers) (_ *http.Request, status int, doc []byte, pooled bool, err error) {
	raw, form, err := readBody(r, bufs.body[:0])
	bufs.body = raw[:0]
	q := r.URL.Query()
	// The credential comes first (CONTRACT §15): a form's access_token is
	// read from the body, as a query's, before anything else of it.
	var values url.Values
	if err == nil && form {
		values, err = parseForm(raw)
	}
	r, aerr := h.withAccessToken(r, q, values)
	if aerr != nil {
		return r, 0, nil, false, aerr
	}
	if err != nil {
		return r, 0, nil, false, h.refuseBody(r.Context(), q.Get("node"), err)
	}
	key := r.Header.Get("Idempotency-Key")
	if key != "" && h.opts.Idempotency != nil {
		// Claiming the key writes: a caller without a valid credential is
		// answered first.
		if err := h.admitWrite(r.Context(), q, raw, values); err != nil {
			return r, 0, nil, false, err
		}
		// CONTRACT §1: the same key from the same caller, app and user
		// both (two users of one app never share answers); the stored
		// fingerprint covers the node, whether it is in the body or the
		// query, and the body.
		app, user := h.caller(r.Context())
		scope := "app:" + app + "/user:" + user
		if len(key) > 255 {
			return r, 0, nil, false, apierr.Invalid("Idempotency-Key", "Invalid parameter: Idempotency-Key is longer than 255 characters.")
		}
		// A form's fingerprint is its fields, in order and without the
		// access_token: the credential is not part of the write.
		written := raw
		if values != nil {
			written = []byte(values.Encode())
		}
		fingerprint := append([]byte(q.Get("node")+"\n"), written...)
		ctx := r.Context()
		status, doc, err = h.opts.Idempotency.Do(ctx, scope, key, fingerprint, func() (int, []byte, error) {
			return h.post(ctx, q, raw, values, nil)
		})
		return r, status, doc, false, err
	}
	status, doc, err = h.post(r.Context(), q, raw, values, bufs)
	return r, status, doc, true, err
}

// withAccessToken returns r with the context of its access_token parameter,
// from the query or form (nil for a JSON body), when it has one: given
// twice, it must be the same token. The form's is then deleted, so that
// nothing downstream (binding, fingerprints) sees the credential.
func (h *Handler) withAccessToken(r *http.Request, q, form url.Values) (*http.Request, error) {
	tokens := q["access_token"]
	if t, ok := form["access_token"]; ok {
		tokens = append(tokens[:len(tokens):len(tokens)], t...)
		delete(form, "access_token")
	}
	if len(tokens) == 0 || h.opts.AccessToken == nil {
		return r, nil
	}
	for _, t := range tokens[1:] {
		if t != tokens[0] {
			return r, apierr.Invalid("access_token", "Invalid parameter: access_token is given more than once, with different tokens.")
		}
	}
	ctx, err := h.opts.AccessToken(r.Context(), r, tokens[0])
	if err != nil {
		return r, err
	}
	return r.WithContext(ctx), nil
}

// post runs a write or batch body, form-encoded when form is not nil; bufs
// is do's.
func (h *Handler) post(ctx context.Context, q url.Values, raw []byte, form url.Values, bufs *readBuffers) (int, []byte, error) {
	var body writeBody
	var err error
	if form != nil {
		err = body.useForm(form)
	} else {
		err = body.parse(raw)
	}
	if err != nil {
		return 0, nil, h.refuseBody(ctx, q.Get("node"), err)
	}
	if b, ok := body.fields["batch"]; ok {
		observe.NoteNode(ctx, "batch")
		if len(body.fields) != 1 {
			return 0, nil, h.refuseBody(ctx, "", apierr.Invalid("batch", "Invalid parameter: a batch request carries only the batch field."))
		}
		return h.batch(ctx, b)
	}
	return h.do(ctx, http.MethodPost, q, &body, bufs)
}

// admit lets a caller without a valid credential reach public nodes only
// (CONTRACT §15, authentication comes first): for any other node, or a
// request that names none, the credential's refusal (401, 104 or 190) is
// the answer before the request's fields, parameters or body are read. A
// node no pattern matches is left to routing (404, code 2500), as an
// unknown REST path is. A caller with a valid credential passes at the cost
// of a context lookup; the method's own rule is applied with the call.
func (h *Handler) admit(ctx context.Context, verb, node string) error {
	err := h.opts.Dispatcher.Admit(ctx, nil)
	if err == nil || node == "" {
		return err
	}
	segs, perr := manifestcheck.ParseNode(node)
	if perr != nil {
		return err
	}
	b, _, ok, exists := h.router.Load().match(verb, segs)
	switch {
	case ok:
		return h.opts.Dispatcher.Admit(ctx, b.method.Access)
	case !exists:
		return nil
	}
	return err
}

// admitWrite is admit for a write before its body is bound: the node is
// the query's, or, for a caller without a valid credential only, the one
// its body (form-encoded when form is not nil) names.
func (h *Handler) admitWrite(ctx context.Context, q url.Values, raw []byte, form url.Values) error {
	node := q.Get("node")
	if node == "" && h.opts.Dispatcher.Admit(ctx, nil) != nil {
		if form != nil {
			node = form.Get("node")
		} else if body := (writeBody{}); body.parse(raw) == nil {
			node, _ = body.node()
		}
	}
	return h.admit(ctx, http.MethodPost, node)
}

// refuseBody is the answer to a write whose body, or its headers, were
// refused before its node was known: admit's, for the node of the query
// (if any), comes first.
func (h *Handler) refuseBody(ctx context.Context, node string, err error) error {
	if aerr := h.admit(ctx, http.MethodPost, node); aerr != nil {
		return aerr
	}
	return err
}

func (h *Handler) caller(ctx context.Context) (string, string) {
	return h.opts.Dispatcher.Caller(ctx)
}

// do runs one Graph call. body is nil for GET and DELETE. With bufs not
// nil, the plugin's answer is read into bufs.answer and the document
// rendered into bufs.doc; the caller releases them once the document is
// written.
func (h *Handler) do(ctx context.Context, verb string, q url.Values, body *writeBody, bufs *readBuffers) (int, []byte, error) {
	node := q.Get("node")
	if node == "" && body != nil {
		// Not decoded into node itself: its address would move it to the
		// heap on every call, reads too (the paging closure keeps it).
		n, err := body.node()
		if err != nil {
			return 0, nil, h.refuseBody(ctx, "", err)
		}
		node = n
	}
	if err := h.admit(ctx, verb, node); err != nil {
		return 0, nil, err
	}
	if node == "" {
		return 0, nil, apierr.Invalid("node", "Invalid parameter: node is required.")
	}
	observe.NoteNode(ctx, node)
	var fields []Field
	if f := q.Get("fields"); f != "" {
		var err error
		if fields, err = ParseFields(f); err != nil {
			return 0, nil, apierr.Invalid("fields", "Invalid parameter: %v.", err)
		}
	}
	var answer, dst []byte
	if bufs != nil {
		if answer = bufs.answer[:0]; cap(answer) == 0 {
			answer = make([]byte, 0, minAnswerBuffer)
		}
		dst = bufs.doc
	}
	raw, bound, err := h.call(ctx, verb, node, q, body, answer)
	if bufs != nil {
		// An answer that did not fit was read into a buffer of its own:
		// the next read gets one of its size, with room to spare.
		if need := len(raw) + 64; need > cap(answer) && need <= maxPooledRead {
			answer = make([]byte, 0, need+need/4)
		}
		bufs.answer = answer
	}
	if err != nil {
		return 0, nil, err
	}
	if fields == nil && bound.answer != nil {
		if dst == nil {
			dst = make([]byte, 0, 2*len(raw)+256)
		}
		doc, err := bound.answer.render(dst[:0], raw, func(b []byte, p listPage) []byte {
			return h.appendPaging(b, node, q, p)
		})
		if err == nil {
			return http.StatusOK, doc, nil
		}
	}
	out, err := decodeAnswer(bound.method, raw)
	if err != nil {
		return 0, nil, err
	}
	doc, err := h.render(ctx, node, q, out, fields)
	if err != nil {
		return 0, nil, err
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return 0, nil, apierr.Internal(err)
	}
	return http.StatusOK, b, nil
}

// call matches the node, binds the request and runs it, returning the
// response's wire bytes and the binding that served it. The bytes may
// alias answer (Dispatcher.CallInto) when it is not nil.
func (h *Handler) call(ctx context.Context, verb, node string, q url.Values, body *writeBody, answer []byte) ([]byte, binding, error) {
	var segBuf [8]string
	segs, err := manifestcheck.AppendNode(segBuf[:0], node)
	if err != nil {
		return nil, binding{}, apierr.Invalid("node", "Invalid parameter: %v.", err)
	}
	b, vars, ok, exists := h.router.Load().match(verb, segs)
	if !ok {
		if exists {
			return nil, binding{}, apierr.Invalid("node", "Unsupported %s request on node %q.", verb, node)
		}
		return nil, binding{}, apierr.UnknownNode(node)
	}
	m := b.method
	in := b.requests.get()
	defer b.requests.put(in)
	if err := bindPath(in, vars); err != nil {
		return nil, binding{}, err
	}
	if body != nil {
		if err := body.bind(in, vars); err != nil {
			return nil, binding{}, err
		}
		// Query parameters other than node and fields are not mixed into a
		// write: the body is the write.
	} else if err := bindQuery(in, q, vars); err != nil {
		return nil, binding{}, err
	}
	if err := applyLimit(in); err != nil {
		return nil, binding{}, err
	}
	page, _ := vars.Get("page_id")
	if h.opts.Limiter != nil {
		app, user := h.caller(ctx)
		if err := h.opts.Limiter.Allow(ctx, app, user, page); err != nil {
			return nil, binding{}, err
		}
	}
	raw, err := h.opts.Dispatcher.CallInto(ctx, m, in.Interface(), nil, answer)
	if h.opts.Limiter != nil && page != "" && authorized(err) {
		// A Page's quota is spent only by calls allowed to act on it, so
		// that no one can exhaust a Page's limit without access to it.
		h.opts.Limiter.CountPage(page)
	}
	if err != nil {
		return nil, binding{}, err
	}
	return raw, b, nil
}

// decodeAnswer decodes a method's response for the paths that need the
// message: field selection, edges, and shapes the wire renderer leaves.
func decodeAnswer(m *route.Method, raw []byte) (protoreflect.Message, error) {
	out := m.Output.New()
	if err := proto.Unmarshal(raw, out.Interface()); err != nil {
		return nil, apierr.Internal(fmt.Errorf("%s answered an invalid %s: %w", m.Plugin, m.Desc.Output().FullName(), err))
	}
	return out, nil
}

var renderJSON = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}

// render turns a response message into the Graph JSON document: paging
// rewritten, fields selected, edges expanded.
func (h *Handler) render(ctx context.Context, node string, q url.Values, out protoreflect.Message, fields []Field) (any, error) {
	b, err := renderJSON.Marshal(out.Interface())
	if err != nil {
		return nil, apierr.Internal(err)
	}
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, apierr.Internal(err)
	}
	md := out.Descriptor()
	if isList(md) {
		doc["paging"] = json.RawMessage(h.appendPaging(nil, node, q, pageOf(out)))
		items, _ := doc["data"].([]any)
		itemMD := md.Fields().ByName("data").Message()
		for i, it := range items {
			obj, ok := it.(map[string]any)
			if !ok {
				continue
			}
			sel, err := h.selectFields(ctx, itemNode(itemMD, obj), obj, itemMD, fields)
			if err != nil {
				return nil, err
			}
			items[i] = sel
		}
		if items == nil {
			doc["data"] = []any{}
		}
		return doc, nil
	}
	return h.selectFields(ctx, node, doc, md, fields)
}

// isList reports whether md follows the list convention: data + paging.
func isList(md protoreflect.MessageDescriptor) bool {
	data, paging := md.Fields().ByName("data"), md.Fields().ByName("paging")
	return data != nil && data.IsList() && data.Message() != nil &&
		paging != nil && paging.Message() != nil && paging.Message().FullName() == "svc.plugin.v1.Paging"
}

// itemNode is the node of a list item, from its message's object option:
// "<node>/<id>". A node may name the item's own fields in braces
// ("page/{page_id}/conversations"), for objects that live under a parent.
func itemNode(md protoreflect.MessageDescriptor, obj map[string]any) string {
	o, _ := proto.GetExtension(md.Options(), pluginv1.E_Object).(*pluginv1.GraphObject)
	id, _ := obj["id"].(string)
	if o.GetNode() == "" || id == "" {
		return ""
	}
	segs := strings.Split(o.GetNode(), "/")
	for i, seg := range segs {
		if name, ok := strings.CutPrefix(seg, "{"); ok && strings.HasSuffix(name, "}") {
			v, _ := obj[strings.TrimSuffix(name, "}")].(string)
			if v == "" || strings.Contains(v, "/") {
				return ""
			}
			segs[i] = v
		}
	}
	return strings.Join(segs, "/") + "/" + id
}

// pageOf reads the paging message of a decoded list answer.
func pageOf(out protoreflect.Message) listPage {
	p := out.Get(out.Descriptor().Fields().ByName("paging")).Message()
	get := func(name string) protoreflect.Value {
		return p.Get(p.Descriptor().Fields().ByName(protoreflect.Name(name)))
	}
	return listPage{before: []byte(get("before").String()), after: []byte(get("after").String()),
		hasNext: get("has_next").Bool(), hasPrevious: get("has_previous").Bool()}
}

// appendPaging writes the Graph paging object: the cursors, and absolute
// next and previous URLs where there is more to read.
func (h *Handler) appendPaging(b []byte, node string, q url.Values, p listPage) []byte {
	b = append(b, `{"cursors":{"after":`...)
	b = appendJSONString(b, p.after)
	b = append(b, `,"before":`...)
	b = appendJSONString(b, p.before)
	b = append(b, '}')
	if p.hasNext && len(p.after) > 0 {
		b = append(b, `,"next":"`...)
		b = append(b, h.linkPrefix...)
		b = append(appendPagingQuery(b, q, node, "after", "before", p.after), '"')
	}
	if p.hasPrevious && len(p.before) > 0 {
		b = append(b, `,"previous":"`...)
		b = append(b, h.linkPrefix...)
		b = append(appendPagingQuery(b, q, node, "before", "after", p.before), '"')
	}
	return append(b, '}')
}

// appendPagingQuery writes the query of a paging URL as url.Values.Encode
// writes it (keys sorted, each escaped as url.QueryEscape does): q with
// node set to node, drop removed and set set to cursor. What it writes
// needs no JSON escaping.
func appendPagingQuery(b []byte, q url.Values, node, set, drop string, cursor []byte) []byte {
	var keysBuf [8]string
	keys := append(keysBuf[:0], "node", set)
	for k := range q {
		if k != "node" && k != set && k != drop {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	first := true
	param := func(k string) {
		if !first {
			b = append(b, '&')
		}
		first = false
		b = appendQueryEscape(b, k)
		b = append(b, '=')
	}
	for _, k := range keys {
		switch k {
		case "node":
			param(k)
			b = appendQueryEscape(b, node)
		case set:
			param(k)
			b = appendQueryEscape(b, cursor)
		default:
			for _, v := range q[k] {
				param(k)
				b = appendQueryEscape(b, v)
			}
		}
	}
	return b
}

// appendQueryEscape writes s escaped as url.QueryEscape does: letters,
// digits and -_.~ as they are, a space as +, every other byte as %XX.
func appendQueryEscape[T string | []byte](b []byte, s T) []byte {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~':
			b = append(b, c)
		case c == ' ':
			b = append(b, '+')
		default:
			b = append(b, '%', hex[c>>4], hex[c&0xf])
		}
	}
	return b
}

// appUsage is the X-App-Usage header for a usage in percent; the values
// of 0 to 100 % are made once and shared (net/http only reads them).
func appUsage(percent int) []string {
	if percent >= 0 && percent < len(appUsages) {
		return appUsages[percent]
	}
	return []string{fmt.Sprintf(`{"call_count":%d}`, percent)}
}

var appUsages = func() [][]string {
	out := make([][]string, 101)
	for i := range out {
		out[i] = []string{fmt.Sprintf(`{"call_count":%d}`, i)}
	}
	return out
}()

// selectFields keeps the selected fields of obj and expands edges. With no
// selection obj is returned as is.
func (h *Handler) selectFields(ctx context.Context, node string, obj map[string]any, md protoreflect.MessageDescriptor, fields []Field) (map[string]any, error) {
	if len(fields) == 0 {
		return obj, nil
	}
	out := make(map[string]any, len(fields)+1)
	if id, ok := obj["id"]; ok {
		out["id"] = id
	}
	for _, f := range fields {
		if fd := md.Fields().ByName(protoreflect.Name(f.Name)); fd != nil {
			v := obj[f.Name]
			if f.Sub != nil && fd.Message() != nil && !fd.IsList() && !fd.IsMap() {
				if child, ok := v.(map[string]any); ok {
					sel, err := h.selectFields(ctx, "", child, fd.Message(), f.Sub)
					if err != nil {
						return nil, err
					}
					v = sel
				}
			}
			out[f.Name] = v
			continue
		}
		edge, err := h.expand(ctx, node, f)
		if err != nil {
			return nil, err
		}
		out[f.Name] = edge
	}
	return out, nil
}

// expand reads the edge f of node as a nested Graph read.
func (h *Handler) expand(ctx context.Context, node string, f Field) (any, error) {
	unknown := apierr.Invalid("fields", "Invalid parameter: unknown field %q.", f.Name)
	if node == "" {
		return nil, unknown
	}
	sub := node + "/" + f.Name
	segs, err := manifestcheck.ParseNode(sub)
	if err != nil {
		return nil, unknown
	}
	if _, _, ok, _ := h.router.Load().match(http.MethodGet, segs); !ok {
		return nil, unknown
	}
	q := url.Values{}
	if f.Limit > 0 {
		q.Set("limit", fmt.Sprint(f.Limit))
	}
	raw, b, err := h.call(ctx, http.MethodGet, sub, q, nil, nil)
	if err != nil {
		return nil, err
	}
	out, err := decodeAnswer(b.method, raw)
	if err != nil {
		return nil, err
	}
	return h.render(ctx, sub, q, out, f.Sub)
}

// readBody reads a POST body, which must be JSON or form-encoded (Meta's
// habit, CONTRACT §20), into buf's capacity, and returns it, or buf after
// an error; form reports a form-encoded body.
func readBody(r *http.Request, buf []byte) (raw []byte, form bool, err error) {
	if ct := r.Header.Get("Content-Type"); ct != "application/json" { // the usual one, without parsing
		mt, _, err := mime.ParseMediaType(ct)
		switch {
		case err == nil && mt == "application/json":
		case err == nil && mt == "application/x-www-form-urlencoded":
			form = true
		default:
			return buf, false, apierr.Invalid("Content-Type", "Invalid parameter: Content-Type must be application/json or application/x-www-form-urlencoded.")
		}
	}
	raw, err = readAll(r.Body, buf)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return raw, form, apierr.TooLarge(tooLarge.Limit)
		}
		return raw, form, apierr.Invalid("body", "Invalid parameter: the request body could not be read.")
	}
	return raw, form, nil
}

// parseForm reads a form-encoded body.
func parseForm(raw []byte) (url.Values, error) {
	form, err := url.ParseQuery(string(raw))
	if err != nil {
		return nil, apierr.Invalid("body", "Invalid parameter: the body is not form-encoded.")
	}
	return form, nil
}

// readAll is io.ReadAll appending to b.
func readAll(r io.Reader, b []byte) ([]byte, error) {
	if cap(b) == 0 {
		b = make([]byte, 0, 512)
	}
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				return b, nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// decodeObject decodes a JSON object, refusing anything else.
func decodeObject(raw []byte, into *map[string]json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(into); err != nil || *into == nil {
		return apierr.Invalid("body", "Invalid parameter: the body must be a JSON object.")
	}
	if dec.More() {
		return apierr.Invalid("body", "Invalid parameter: the body must be one JSON object.")
	}
	if _, err := dec.Token(); err != io.EOF {
		return apierr.Invalid("body", "Invalid parameter: the body must be one JSON object.")
	}
	return nil
}
