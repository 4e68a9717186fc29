package catalog

import (
	"context"
	"sort"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"

	"github.com/svcplatform/svc/gateway/internal/host"
	"github.com/svcplatform/svc/gateway/internal/route"
	catalogv1 "github.com/svcplatform/svc/gen/svc/catalog/v1"
	"github.com/svcplatform/svc/gen/svc/catalog/v1/catalogv1connect"
)

// Routes gives the route table in use (dispatch.Dispatcher).
type Routes interface {
	// Table is the route table in use; nil before the first is built.
	Table() *route.Table
}

// Service implements CatalogService.
type Service struct {
	catalogv1connect.UnimplementedCatalogServiceHandler
	routes Routes
	states func() []host.Info
	sdks   []SDK
}

// New returns the service. routes gives the route table in use; states the
// plugins' states (nil: every source is serving).
func New(routes Routes, states func() []host.Info, sdks []SDK) *Service {
	return &Service{routes: routes, states: states, sdks: sdks}
}

// GetCatalog lists the loaded plugins, then the SDKs.
func (s *Service) GetCatalog(context.Context, *connect.Request[catalogv1.GetCatalogRequest]) (*connect.Response[catalogv1.GetCatalogResponse], error) {
	res := &catalogv1.GetCatalogResponse{}
	t := s.routes.Table()
	var methods []*route.Method
	if t != nil {
		methods = t.Methods() // sorted by procedure: once, not per plugin
	}
	for _, src := range sortedSources(t) {
		entry := &catalogv1.CatalogEntry{Name: src.Plugin.Name, Kind: "plugin", Version: src.Plugin.Version,
			Nodes: []string{}, Events: append([]string{}, src.Plugin.Events...)}
		for _, m := range methods {
			if m.Plugin == src.Plugin.Name {
				entry.Nodes = append(entry.Nodes, graphBindings(m)...)
			}
		}
		res.Data = append(res.Data, entry)
	}
	for _, sdk := range s.sdks {
		res.Data = append(res.Data, &catalogv1.CatalogEntry{Name: sdk.Name, Kind: "sdk", Version: sdk.Version,
			Nodes: []string{}, Events: []string{}, Language: sdk.Language, Package: sdk.Package, Path: sdk.Path, Docs: sdk.Docs})
	}
	return connect.NewResponse(res), nil
}

// GetParity lists each surface of each loaded plugin with its state.
func (s *Service) GetParity(context.Context, *connect.Request[catalogv1.GetParityRequest]) (*connect.Response[catalogv1.GetParityResponse], error) {
	state := map[string]string{}
	if s.states != nil {
		for _, in := range s.states() {
			state[in.Name] = string(in.State)
		}
	}
	res := &catalogv1.GetParityResponse{}
	t := s.routes.Table()
	var methods []*route.Method
	if t != nil {
		methods = t.Methods()
	}
	for _, src := range sortedSources(t) {
		status := state[src.Plugin.Name]
		if status == "" {
			status = string(host.StateServing) // in-process: serving while the gateway is
		}
		add := func(surface, name string) {
			res.Data = append(res.Data, &catalogv1.ParityEntry{Product: src.Plugin.Name, Surface: surface, Name: name, Status: status})
		}
		for _, m := range methods {
			if m.Plugin != src.Plugin.Name {
				continue
			}
			for _, b := range graphBindings(m) {
				add("graph", b)
			}
			if rest := restBinding(m); rest != "" {
				add("rest", rest)
			}
			add("rpc", m.Procedure)
		}
		for _, e := range src.Plugin.Events {
			add("event", e)
		}
	}
	return connect.NewResponse(res), nil
}

func sortedSources(t *route.Table) []route.Source {
	if t == nil {
		return nil // before the first table: nothing is loaded yet
	}
	out := append([]route.Source{}, t.Sources()...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Plugin.Name < out[j].Plugin.Name })
	return out
}

// graphBindings are a method's Graph nodes, "GET page/{page_id}/posts".
func graphBindings(m *route.Method) []string {
	var out []string
	g := m.Graph
	for _, b := range [][2]string{{"GET", g.GetGet()}, {"POST", g.GetPost()}, {"DELETE", g.GetDelete()}} {
		if b[1] != "" {
			out = append(out, b[0]+" "+b[1])
		}
	}
	return out
}

// restBinding is a method's REST path, "POST /api/v1/platform/wearables/push".
func restBinding(m *route.Method) string {
	rule, _ := proto.GetExtension(m.Desc.Options(), annotations.E_Http).(*annotations.HttpRule)
	switch {
	case rule == nil:
		return ""
	case rule.GetGet() != "":
		return "GET " + rule.GetGet()
	case rule.GetPost() != "":
		return "POST " + rule.GetPost()
	case rule.GetPut() != "":
		return "PUT " + rule.GetPut()
	case rule.GetPatch() != "":
		return "PATCH " + rule.GetPatch()
	case rule.GetDelete() != "":
		return "DELETE " + rule.GetDelete()
	}
	return ""
}
