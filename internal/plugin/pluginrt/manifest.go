package pluginrt

import (
	"errors"
	"fmt"
	"sort"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/protocol"
)

// buildManifest describes the plugin. The gateway builds its routes, access
// checks and request validation from the descriptors, so they carry every
// file the services need.
func (p *Plugin) buildManifest() (*pluginv1.Manifest, error) {
	if p.name == "" {
		return nil, errors.New("sdk: Info.Name is empty")
	}
	if len(p.services) == 0 {
		return nil, fmt.Errorf("sdk: plugin %q registers no methods", p.name)
	}
	files, err := fileSet(p.services)
	if err != nil {
		return nil, err
	}
	m := &pluginv1.Manifest{
		Name:            p.name,
		Version:         p.version,
		ProtocolVersion: protocol.Version,
		Files:           files,
		Events:          append([]string(nil), p.events...),
		OnUserLeft:      p.methods[UserLeftProcedure] != nil,
	}
	for _, s := range p.services {
		m.Services = append(m.Services, string(s.FullName()))
	}
	sort.Strings(m.Services)
	for _, s := range p.services {
		for i := range s.Methods().Len() {
			md := s.Methods().Get(i)
			if p.methods[Procedure(md)] == nil {
				p.log.Warn("method has no handler; calls to it are refused", "procedure", Procedure(md))
			}
		}
	}
	return m, nil
}

// fileSet returns the files declaring services and everything they import,
// transitively, each file after its dependencies, in an order that depends
// only on the files themselves.
func fileSet(services []protoreflect.ServiceDescriptor) (*descriptorpb.FileDescriptorSet, error) {
	roots := make([]protoreflect.FileDescriptor, 0, len(services))
	for _, s := range services {
		roots = append(roots, s.ParentFile())
	}
	sort.Slice(roots, func(i, j int) bool { return roots[i].Path() < roots[j].Path() })

	set := &descriptorpb.FileDescriptorSet{}
	seen := make(map[string]bool)
	var visit func(fd protoreflect.FileDescriptor) error
	visit = func(fd protoreflect.FileDescriptor) error {
		if seen[fd.Path()] {
			return nil
		}
		seen[fd.Path()] = true
		if fd.IsPlaceholder() {
			return fmt.Errorf("sdk: proto file %s is imported but not linked into the plugin; import its generated Go package", fd.Path())
		}
		imports := fd.Imports()
		for i := range imports.Len() {
			if err := visit(imports.Get(i).FileDescriptor); err != nil {
				return err
			}
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(fd))
		return nil
	}
	for _, fd := range roots {
		if err := visit(fd); err != nil {
			return nil, err
		}
	}
	return set, nil
}

// Manifest ends registration and returns the plugin's manifest, for
// running it inside the host process: the gateway serves its own services
// this way, through the same routing, validation and access checks as a
// plugin's.
func (p *Plugin) Manifest() (*pluginv1.Manifest, error) {
	if err := p.Freeze(); err != nil {
		return nil, err
	}
	return proto.Clone(p.manifest).(*pluginv1.Manifest), nil
}
