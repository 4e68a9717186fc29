package graph

import (
	"testing"

	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
)

func TestListItemNodesFillTheirParentFromTheItem(t *testing.T) {
	md := (&svcchatv1.Conversation{}).ProtoReflect().Descriptor()
	cases := []struct {
		obj  map[string]any
		want string
	}{
		{map[string]any{"id": "7", "page_id": "5"}, "page/5/conversations/7"},
		{map[string]any{"id": "7"}, ""},
		{map[string]any{"id": "7", "page_id": "a/b"}, ""},
		{map[string]any{"page_id": "5"}, ""},
	}
	for _, c := range cases {
		if got := itemNode(md, c.obj); got != c.want {
			t.Errorf("itemNode(%v) = %q, want %q", c.obj, got, c.want)
		}
	}
}
