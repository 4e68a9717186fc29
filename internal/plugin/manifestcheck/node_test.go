package manifestcheck

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseNode(t *testing.T) {
	t.Parallel()
	ok := map[string][]string{
		"me":                                {"me"},
		"me/pages":                          {"me", "pages"},
		"/page/123/posts/":                  {"page", "123", "posts"},
		"page/1/conversations/9/handover":   {"page", "1", "conversations", "9", "handover"},
		"thread/m_AbC-12_x":                 {"thread", "m_AbC-12_x"},
		"app/42/svcchat_templates/hello.v2": {"app", "42", "svcchat_templates", "hello.v2"},
	}
	for in, want := range ok {
		got, err := ParseNode(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseNode(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "/", "//", "page//posts", "page/../secret", "page/./x", "page/1?x", "page/1 2",
		"page/%2e%2e", "pagé/1", strings.Repeat("a", MaxNodeLength+1)} {
		if got, err := ParseNode(bad); err == nil {
			t.Errorf("ParseNode(%q) = %v, want an error", bad, got)
		}
	}
}

func TestPatternMatch(t *testing.T) {
	t.Parallel()
	p, err := CompilePattern("page/{page_id}/conversations/{conversation_id}/handover")
	if err != nil {
		t.Fatal(err)
	}
	vars, ok := p.Match([]string{"page", "7", "conversations", "99", "handover"})
	page, _ := vars.Get("page_id")
	conversation, _ := vars.Get("conversation_id")
	if _, found := vars.Get("page"); !ok || page != "7" || conversation != "99" || found || vars.Len() != 2 {
		t.Fatalf("match = %v, %v", vars, ok)
	}
	if _, ok := p.Match([]string{"page", "7", "conversations", "99"}); ok {
		t.Fatal("shorter node matched")
	}
	for _, bad := range []string{"page/{id", "page/x{id}", "", "page//{id}", "page/{id}/x/{id}"} {
		if _, err := CompilePattern(bad); err == nil {
			t.Errorf("CompilePattern(%q) succeeded", bad)
		}
	}
}

func FuzzParseNode(f *testing.F) {
	for _, s := range []string{"me", "page/1/posts", "/x/", "a//b", "../..", "page/{id}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		segs, err := ParseNode(s)
		if err != nil {
			return
		}
		for _, seg := range segs {
			if seg == "" || seg == "." || seg == ".." || strings.Contains(seg, "/") {
				t.Fatalf("ParseNode(%q) gave segment %q", s, seg)
			}
		}
		again, err := ParseNode(strings.Join(segs, "/"))
		if err != nil || !reflect.DeepEqual(again, segs) {
			t.Fatalf("re-parsing %q: %v, %v", s, again, err)
		}
		if split := strings.Split(strings.TrimSuffix(strings.TrimPrefix(s, "/"), "/"), "/"); !reflect.DeepEqual(segs, split) {
			t.Fatalf("ParseNode(%q) = %q, not its segments %q", s, segs, split)
		}
		// AppendNode keeps what the slice held and adds the same segments.
		if got, err := AppendNode([]string{"kept"}, s); err != nil || !reflect.DeepEqual(got, append([]string{"kept"}, segs...)) {
			t.Fatalf("AppendNode(kept, %q) = %q, %v", s, got, err)
		}
	})
}

func FuzzCompilePattern(f *testing.F) {
	for _, s := range []string{"page/{page_id}/posts", "me", "a/{x}/{x}", "a/x{y}", "{", "/{a}/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := CompilePattern(s)
		if err != nil {
			return
		}
		// The node the pattern names with each variable set to "v" matches
		// it, binding every variable, which are distinct.
		node := strings.ReplaceAll(p.Shape(), "{}", "v")
		segs, err := ParseNode(node)
		if err != nil {
			t.Fatalf("CompilePattern(%q) has shape %q, which does not parse: %v", s, p.Shape(), err)
		}
		vars, ok := p.Match(segs)
		names := map[string]bool{}
		for name := range vars.All() {
			names[name] = true
		}
		if !ok || len(names) != len(p.Vars()) {
			t.Fatalf("CompilePattern(%q) does not match %q (%v, vars %v)", s, node, ok, p.Vars())
		}
	})
}
