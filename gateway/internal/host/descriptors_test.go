package host

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	testpluginv1 "github.com/svcplatform/svc/gen/svc/testplugin/v1"
)

// setOf is the descriptor set of fd's file with every file it imports,
// imports first, as a plugin sends it.
func setOf(fd protoreflect.FileDescriptor) *descriptorpb.FileDescriptorSet {
	set := &descriptorpb.FileDescriptorSet{}
	seen := map[string]bool{}
	var add func(protoreflect.FileDescriptor)
	add = func(f protoreflect.FileDescriptor) {
		if seen[f.Path()] {
			return
		}
		seen[f.Path()] = true
		imports := f.Imports()
		for i := range imports.Len() {
			add(imports.Get(i).FileDescriptor)
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(f))
	}
	add(fd)
	return set
}

func TestAFileEqualToTheGatewaysOwnIsSharedNotBuiltAgain(t *testing.T) {
	own := testpluginv1.File_svc_testplugin_v1_testplugin_proto
	files, err := ResolveFiles(setOf(own))
	if err != nil {
		t.Fatal(err)
	}
	got, err := files.FindFileByPath(own.Path())
	if err != nil {
		t.Fatal(err)
	}
	if got != own {
		t.Errorf("%s was built again instead of shared", own.Path())
	}
	if files.NumFiles() != len(setOf(own).GetFile()) {
		t.Errorf("registry holds %d files, want %d", files.NumFiles(), len(setOf(own).GetFile()))
	}
}

func TestAFileThatDiffersFromTheGatewaysOwnIsBuiltFromWhatThePluginSent(t *testing.T) {
	own := testpluginv1.File_svc_testplugin_v1_testplugin_proto
	set := setOf(own)
	last := set.File[len(set.File)-1]
	// A partner built against a newer copy of the file: one more message.
	last.MessageType = append(last.MessageType, &descriptorpb.DescriptorProto{Name: proto.String("AddedLater")})
	files, err := ResolveFiles(set)
	if err != nil {
		t.Fatal(err)
	}
	got, err := files.FindFileByPath(own.Path())
	if err != nil {
		t.Fatal(err)
	}
	if got == own {
		t.Fatal("a different file was replaced by the gateway's own")
	}
	name := protoreflect.FullName(own.Package() + ".AddedLater")
	if _, err := files.FindDescriptorByName(name); err != nil {
		t.Errorf("%s is missing: %v", name, err)
	}
	// Its imports are still shared: they are the same files.
	imports := got.Imports()
	for i := range imports.Len() {
		dep := imports.Get(i).FileDescriptor
		if g, err := protoregistry.GlobalFiles.FindFileByPath(dep.Path()); err == nil && g != dep {
			t.Errorf("import %s was built again", dep.Path())
		}
	}
}

func TestAFileWhoseImportDiffersIsNotShared(t *testing.T) {
	own := testpluginv1.File_svc_testplugin_v1_testplugin_proto
	set := setOf(own)
	if len(set.File) < 2 {
		t.Skip("the test plugin's file imports nothing")
	}
	// Change an import of the plugin's file: the file itself is byte-equal
	// to the gateway's, but its types now refer to the changed import.
	first := set.File[0]
	first.MessageType = append(first.MessageType, &descriptorpb.DescriptorProto{Name: proto.String("AddedLater")})
	files, err := ResolveFiles(set)
	if err != nil {
		t.Fatal(err)
	}
	got, err := files.FindFileByPath(own.Path())
	if err != nil {
		t.Fatal(err)
	}
	if got == own {
		t.Error("a file was shared though one of its imports was built from the plugin's copy")
	}
}

func TestDescriptorSetsThatDoNotResolveAreRefused(t *testing.T) {
	own := testpluginv1.File_svc_testplugin_v1_testplugin_proto
	full := setOf(own)
	for _, tc := range []struct {
		name string
		set  *descriptorpb.FileDescriptorSet
		want string
	}{
		{"an import is missing", &descriptorpb.FileDescriptorSet{File: full.File[len(full.File)-1:]}, "is not in the descriptor set"},
		{"a file twice", &descriptorpb.FileDescriptorSet{File: append(full.File[:len(full.File):len(full.File)], full.File[len(full.File)-1])}, "appears twice"},
		{"an import cycle", &descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{
			{Name: proto.String("a.proto"), Dependency: []string{"b.proto"}},
			{Name: proto.String("b.proto"), Dependency: []string{"a.proto"}},
		}}, "import cycle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ResolveFiles(tc.set)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
}
