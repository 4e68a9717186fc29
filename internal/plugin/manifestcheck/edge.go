package manifestcheck

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// Edge is what a method asks of the gateway's edge beyond the Graph and
// REST, from its edge.proto options: a plain HTTP path, assets for
// me/assigned_assets, metrics for /metrics, a call when an app goes live.
// The gateway serves each generically, so that it names no product.
type Edge struct {
	// Verb and Path are the plain HTTP path bound (http_path): "POST" and
	// "/v1/chat/completions"; empty without one.
	Verb, Path string
	// Prefix: Path ends in "/" and binds every path of one more segment
	// under it.
	Prefix bool
	// ErrorStyle is the shape of the gateway's own refusals on Path.
	ErrorStyle pluginv1.ErrorStyle
	// StreamProcedure is the server-streaming method called instead when
	// the JSON body's top-level StreamField is true; empty: never streams.
	StreamProcedure, StreamField string
	// Assets is the assigned_assets option: the method lists assets of its
	// caller, of this type and with these tasks; nil without one.
	Assets *pluginv1.AssetList
	// Metrics: the method hands the plugin's metrics to the gateway.
	Metrics bool
	// OnAppLive: the method is called when an app goes live.
	OnAppLive bool
}

// HTTP is the plain HTTP path bound, "POST /v1/chat/completions" (a
// prefix ends in "/*"); "" for none (e may be nil).
func (e *Edge) HTTP() string {
	if e == nil || e.Path == "" {
		return ""
	}
	if e.Prefix {
		return e.Verb + " " + e.Path + "*"
	}
	return e.Verb + " " + e.Path
}

// The messages of edge.proto the edge's methods exchange.
var (
	httpRequest     = (&pluginv1.HttpRequest{}).ProtoReflect().Descriptor().FullName()
	httpResponse    = (&pluginv1.HttpResponse{}).ProtoReflect().Descriptor().FullName()
	httpStreamPart  = (&pluginv1.HttpStreamPart{}).ProtoReflect().Descriptor().FullName()
	metricsRequest  = (&pluginv1.MetricsRequest{}).ProtoReflect().Descriptor().FullName()
	metricsResponse = (&pluginv1.MetricsResponse{}).ProtoReflect().Descriptor().FullName()
)

// checkEdge reads md's edge options, adding what is wrong with them to
// errs: an HTTP path that is not one exact path of a unary method from
// HttpRequest to HttpResponse (with, to stream, a server-streaming method
// of the same service from HttpRequest to HttpStreamPart); an asset list
// that is not a unary list of items with a string id; a metrics method
// that is not MetricsRequest → MetricsResponse; an on_app_live method
// without a string app_id.
func checkEdge(md protoreflect.MethodDescriptor, errs []error) (*Edge, []error) {
	opts := md.Options()
	hp, _ := proto.GetExtension(opts, pluginv1.E_HttpPath).(*pluginv1.HttpPath)
	assets, _ := proto.GetExtension(opts, pluginv1.E_AssignedAssets).(*pluginv1.AssetList)
	metrics, _ := proto.GetExtension(opts, pluginv1.E_Metrics).(bool)
	onLive, _ := proto.GetExtension(opts, pluginv1.E_OnAppLive).(bool)
	if hp == nil && assets == nil && !metrics && !onLive {
		return nil, errs
	}
	e := &Edge{Assets: assets, Metrics: metrics, OnAppLive: onLive}
	unary := func(option string) {
		if md.IsStreamingServer() || md.IsStreamingClient() {
			errs = append(errs, fmt.Errorf("%s: the method must be unary", option))
		}
	}
	if hp != nil {
		errs = append(errs, checkHTTPPath(md, hp, e)...)
	}
	if assets != nil {
		unary("assigned_assets")
		if assets.GetType() == "" {
			errs = append(errs, errors.New("assigned_assets: type is empty"))
		}
		data := md.Output().Fields().ByName("data")
		if data == nil || !data.IsList() || data.Message() == nil || !stringField(data.Message(), "id") {
			errs = append(errs, fmt.Errorf("assigned_assets: %s has no repeated data of items with a string id", md.Output().FullName()))
		}
	}
	if metrics {
		unary("metrics")
		if md.Input().FullName() != metricsRequest || md.Output().FullName() != metricsResponse {
			errs = append(errs, fmt.Errorf("metrics: the method must take %s and answer %s", metricsRequest, metricsResponse))
		}
	}
	if onLive {
		unary("on_app_live")
		if !stringField(md.Input(), "app_id") {
			errs = append(errs, fmt.Errorf("on_app_live: %s has no string app_id", md.Input().FullName()))
		}
	}
	return e, errs
}

func checkHTTPPath(md protoreflect.MethodDescriptor, hp *pluginv1.HttpPath, e *Edge) []error {
	var errs []error
	switch {
	case hp.GetGet() != "" && hp.GetPost() == "":
		e.Verb, e.Path = http.MethodGet, hp.GetGet()
	case hp.GetPost() != "" && hp.GetGet() == "":
		e.Verb, e.Path = http.MethodPost, hp.GetPost()
	default:
		return []error{errors.New("http_path: set one of get and post")}
	}
	e.ErrorStyle = hp.GetErrorStyle()
	e.Prefix = hp.GetPrefix()
	// A dot in the first segment is an RPC's (/pkg.Service/Method), unless
	// the path is that one segment: a file such as /embed.js.
	first, rest, nested := strings.Cut(strings.TrimPrefix(e.Path, "/"), "/")
	if !strings.HasPrefix(e.Path, "/") || strings.ContainsAny(e.Path, "{}?# \t") || (nested && strings.Contains(first, ".")) ||
		strings.HasPrefix(first, ".") {
		errs = append(errs, fmt.Errorf("http_path %q: want one exact path such as /v1/models (no variables, query, or dot in its first segment)", e.Path))
	}
	if e.Prefix && (e.Verb != http.MethodGet || !strings.HasSuffix(e.Path, "/") || !nested || strings.Contains(strings.TrimSuffix(rest, "/"), "//")) {
		errs = append(errs, fmt.Errorf("http_path %q: a prefix is a get path ending in \"/\" under a first segment, such as /posts/", e.Path))
	}
	if md.IsStreamingServer() {
		errs = append(errs, errors.New("http_path: the method must be unary (a stream is its stream_method)"))
	}
	if md.Input().FullName() != httpRequest || md.Output().FullName() != httpResponse {
		errs = append(errs, fmt.Errorf("http_path: the method must take %s and answer %s", httpRequest, httpResponse))
	}
	if (hp.GetStreamMethod() == "") != (hp.GetStreamField() == "") {
		return append(errs, errors.New("http_path: stream_method and stream_field go together"))
	}
	if hp.GetStreamMethod() == "" {
		return errs
	}
	if e.Verb != http.MethodPost {
		errs = append(errs, errors.New("http_path: only a post path streams (the stream is asked for in the body)"))
	}
	sm := md.Parent().(protoreflect.ServiceDescriptor).Methods().ByName(protoreflect.Name(hp.GetStreamMethod()))
	if sm == nil || !sm.IsStreamingServer() || sm.IsStreamingClient() || sm.Input().FullName() != httpRequest || sm.Output().FullName() != httpStreamPart {
		errs = append(errs, fmt.Errorf("http_path: stream_method %q is not a server-streaming method of the service from %s to %s", hp.GetStreamMethod(), httpRequest, httpStreamPart))
	} else {
		e.StreamProcedure = "/" + string(sm.Parent().FullName()) + "/" + string(sm.Name())
		e.StreamField = hp.GetStreamField()
	}
	return errs
}

// stringField reports whether md has a singular string field name.
func stringField(md protoreflect.MessageDescriptor, name string) bool {
	fd := md.Fields().ByName(protoreflect.Name(name))
	return fd != nil && fd.Kind() == protoreflect.StringKind && !fd.IsList()
}
