package host

import (
	"fmt"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// ResolveFiles resolves a plugin's descriptor set. Every plugin sends the
// files its services import, and most of them are the same files the
// gateway is built with (descriptor.proto, buf/validate, google/api, the
// plugin protocol's options): a file byte-for-byte equal to the compiled-in
// one, whose imports are all shared too, is taken from the gateway's own
// registry instead of being built again, so ten plugins hold one copy of
// them, not eleven. Any other file is built from what the plugin sent, as
// protodesc.NewFiles would.
func ResolveFiles(set *descriptorpb.FileDescriptorSet) (*protoregistry.Files, error) {
	byPath := make(map[string]*descriptorpb.FileDescriptorProto, len(set.GetFile()))
	for _, f := range set.GetFile() {
		if _, dup := byPath[f.GetName()]; dup {
			return nil, fmt.Errorf("file %q appears twice in the descriptor set", f.GetName())
		}
		byPath[f.GetName()] = f
	}
	r := resolver{byPath: byPath, files: new(protoregistry.Files), done: map[string]protoreflect.FileDescriptor{},
		visiting: map[string]bool{}}
	for _, f := range set.GetFile() {
		if _, err := r.resolve(f.GetName()); err != nil {
			return nil, err
		}
	}
	return r.files, nil
}

type resolver struct {
	byPath   map[string]*descriptorpb.FileDescriptorProto
	files    *protoregistry.Files
	done     map[string]protoreflect.FileDescriptor
	visiting map[string]bool
}

// resolve builds (or shares) the file at path after its imports, and
// registers it.
func (r *resolver) resolve(path string) (protoreflect.FileDescriptor, error) {
	if fd, ok := r.done[path]; ok {
		return fd, nil
	}
	fdp, ok := r.byPath[path]
	if !ok {
		return nil, fmt.Errorf("import %q is not in the descriptor set", path)
	}
	if r.visiting[path] {
		return nil, fmt.Errorf("import cycle through %q", path)
	}
	r.visiting[path] = true
	shareable := true
	for _, dep := range fdp.GetDependency() {
		d, err := r.resolve(dep)
		if err != nil {
			return nil, err
		}
		if !isCompiled(d) {
			shareable = false
		}
	}
	var fd protoreflect.FileDescriptor
	if shareable {
		fd = compiledEqual(fdp)
	}
	if fd == nil {
		var err error
		if fd, err = (protodesc.FileOptions{}).New(fdp, r.files); err != nil {
			return nil, err
		}
	}
	if err := r.files.RegisterFile(fd); err != nil {
		return nil, err
	}
	r.done[path] = fd
	return fd, nil
}

// compiled holds each compiled-in file's canonical encoding, made once per
// path on first use.
var compiled sync.Map // path -> compiledFile

type compiledFile struct {
	fd  protoreflect.FileDescriptor
	enc []byte
}

// isCompiled tells whether fd is the gateway's own descriptor of its file.
func isCompiled(fd protoreflect.FileDescriptor) bool {
	g, err := protoregistry.GlobalFiles.FindFileByPath(fd.Path())
	return err == nil && g == fd
}

// compiledEqual returns the gateway's own descriptor of fdp's file when it
// is the same file, or nil.
func compiledEqual(fdp *descriptorpb.FileDescriptorProto) protoreflect.FileDescriptor {
	path := fdp.GetName()
	v, ok := compiled.Load(path)
	if !ok {
		g, err := protoregistry.GlobalFiles.FindFileByPath(path)
		if err != nil {
			compiled.Store(path, compiledFile{})
			return nil
		}
		enc, err := canonical(protodesc.ToFileDescriptorProto(g))
		if err != nil {
			return nil
		}
		v, _ = compiled.LoadOrStore(path, compiledFile{fd: g, enc: enc})
	}
	c := v.(compiledFile)
	if c.fd == nil {
		return nil
	}
	enc, err := canonical(fdp)
	if err != nil || string(enc) != string(c.enc) {
		return nil
	}
	return c.fd
}

// canonical encodes a file descriptor deterministically, without source
// positions (which say nothing about the types and differ between builds).
func canonical(fdp *descriptorpb.FileDescriptorProto) ([]byte, error) {
	if fdp.SourceCodeInfo != nil {
		fdp = proto.CloneOf(fdp)
		fdp.SourceCodeInfo = nil
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(fdp)
}
