package server

import (
	"context"
	"net/http"
	"strings"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/svcplatform/svc/gateway/internal/apierr"
)

// restRoutes finds the method a REST request calls from the methods'
// google.api.http rules, before the transcoder reads anything of the
// request (CONTRACT §15: authentication comes first). The transcoder
// decodes a REST GET's path and query as soon as it has matched it (it
// calls the method with Connect GET), so the method's own admission,
// which runs when the method's handler is called, would come after a bad
// parameter was noticed.
//
// The rules are matched as the transcoder matches them: literal segments,
// "*" (one segment), "**" (the rest), variables ({field} or
// {field=pattern}) and a ":verb" suffix. Only which method is known here;
// the variables' values are the transcoder's to decode.
type restRoutes map[string][]*restRoute // by HTTP method

// restRoute is one binding of a method.
type restRoute struct {
	segments []string // "*", "**" or a literal
	verb     string
	input    protoreflect.MessageDescriptor
	// admit is the method's admission; nil for a public method.
	admit func(ctx context.Context) error
}

// addService adds the REST bindings of svc's methods.
func (rr restRoutes) addService(svc Service) {
	methods := svc.Schema.Methods()
	for i := range methods.Len() {
		md := methods.Get(i)
		rule, _ := proto.GetExtension(md.Options(), annotations.E_Http).(*annotations.HttpRule)
		if rule == nil {
			continue
		}
		var admit func(ctx context.Context) error
		if svc.Admission != nil {
			admit = svc.Admission(md)
		}
		for _, r := range append([]*annotations.HttpRule{rule}, rule.GetAdditionalBindings()...) {
			verb, tmpl := httpRuleTemplate(r)
			if tmpl == "" {
				continue
			}
			segments, custom := parseTemplate(tmpl)
			rr[verb] = append(rr[verb], &restRoute{segments: segments, verb: custom, input: md.Input(), admit: admit})
		}
	}
}

func httpRuleTemplate(r *annotations.HttpRule) (method, tmpl string) {
	switch p := r.GetPattern().(type) {
	case *annotations.HttpRule_Get:
		return http.MethodGet, p.Get
	case *annotations.HttpRule_Post:
		return http.MethodPost, p.Post
	case *annotations.HttpRule_Put:
		return http.MethodPut, p.Put
	case *annotations.HttpRule_Patch:
		return http.MethodPatch, p.Patch
	case *annotations.HttpRule_Delete:
		return http.MethodDelete, p.Delete
	case *annotations.HttpRule_Custom:
		return p.Custom.GetKind(), p.Custom.GetPath()
	}
	return "", ""
}

// parseTemplate flattens a path template into segment patterns: a
// variable stands for its pattern ("*" when it has none).
func parseTemplate(tmpl string) (segments []string, verb string) {
	tmpl = strings.TrimPrefix(tmpl, "/")
	// The verb follows the last ':' outside braces.
	if i := strings.LastIndexByte(tmpl, ':'); i >= 0 && !strings.Contains(tmpl[i:], "}") && !strings.Contains(tmpl[i:], "/") {
		tmpl, verb = tmpl[:i], tmpl[i+1:]
	}
	for tmpl != "" {
		if tmpl[0] == '{' {
			end := strings.IndexByte(tmpl, '}')
			if end < 0 {
				return append(segments, tmpl), verb // malformed: matches nothing sensible
			}
			variable := tmpl[1:end]
			tmpl = strings.TrimPrefix(tmpl[end+1:], "/")
			if _, pattern, ok := strings.Cut(variable, "="); ok {
				segments = append(segments, strings.Split(pattern, "/")...)
			} else {
				segments = append(segments, "*")
			}
			continue
		}
		seg, rest, _ := strings.Cut(tmpl, "/")
		segments = append(segments, seg)
		tmpl = rest
	}
	return segments, verb
}

// match finds the route of r, or nil.
func (rr restRoutes) match(r *http.Request) *restRoute {
	routes := rr[r.Method]
	if len(routes) == 0 {
		return nil
	}
	path := strings.TrimPrefix(r.URL.Path, "/")
	var best *restRoute
	bestScore := -1
	for _, rt := range routes {
		p := path
		if rt.verb != "" {
			var ok bool
			if p, ok = strings.CutSuffix(p, ":"+rt.verb); !ok {
				continue
			}
		}
		if score, ok := matchSegments(rt.segments, p); ok && score > bestScore {
			best, bestScore = rt, score
		}
	}
	return best
}

// matchSegments matches path (without its leading '/') against patterns;
// the score counts literal segments, so that the most literal route wins
// where two match.
func matchSegments(patterns []string, path string) (int, bool) {
	score := 0
	for i, pat := range patterns {
		if pat == "**" {
			return score, i == len(patterns)-1 // the rest, even nothing
		}
		if path == "" {
			return 0, false
		}
		seg, rest, _ := strings.Cut(path, "/")
		switch {
		case seg == "":
			return 0, false
		case pat == "*":
		case seg != pat:
			return 0, false
		default:
			score++
		}
		path = rest
	}
	return score, path == ""
}

// admitREST runs the admission of the method a REST request calls, then
// refuses query parameters that name no field of its request (the
// transcoder answers those with an internal error). It answers the request
// and returns false when it refuses; a request no route matches is left to
// the transcoder (404, 405).
func (rr restRoutes) admitREST(w http.ResponseWriter, r *http.Request) bool {
	rt := rr.match(r)
	if rt == nil {
		return true
	}
	if rt.admit != nil {
		if err := rt.admit(r.Context()); err != nil {
			apierr.Write(w, r, err)
			return false
		}
	}
	if r.URL.RawQuery == "" {
		return true
	}
	for name := range r.URL.Query() {
		if !knownFieldPath(rt.input, name) {
			apierr.Write(w, r, apierr.Invalid(name, "Invalid parameter: %s is not a parameter of this request.", name))
			return false
		}
	}
	return true
}

// knownFieldPath says whether path ("a.b.c", each element a field's name or
// JSON name) names a field of msg, as the transcoder resolves query
// parameters.
func knownFieldPath(msg protoreflect.MessageDescriptor, path string) bool {
	for {
		part, rest, more := strings.Cut(path, ".")
		fields := msg.Fields()
		fd := fields.ByJSONName(part)
		if fd == nil {
			fd = fields.ByName(protoreflect.Name(part))
		}
		if fd == nil {
			return false
		}
		if !more {
			return true
		}
		if fd.Cardinality() == protoreflect.Repeated || fd.Message() == nil {
			return false
		}
		msg, path = fd.Message(), rest
	}
}
