package graph

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestParseFields(t *testing.T) {
	t.Parallel()
	got, err := ParseFields("id,name,posts.limit(5){id,content},owner{id}")
	if err != nil {
		t.Fatal(err)
	}
	want := []Field{{Name: "id"}, {Name: "name"}, {Name: "posts", Limit: 5, Sub: []Field{{Name: "id"}, {Name: "content"}}},
		{Name: "owner", Sub: []Field{{Name: "id"}}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	for _, bad := range []string{"", ",", "id,", "id,,name", "posts{", "posts{}", "posts.limit(0){id}", "posts.limit(101)",
		"posts.offset(3)", "id,id", "a{b{c{d{e{f}}}}}", "id name", "posts.limit(x)", "}"} {
		if f, err := ParseFields(bad); err == nil {
			t.Errorf("ParseFields(%q) = %+v, want an error", bad, f)
		}
	}
}

func TestParseBatch(t *testing.T) {
	t.Parallel()
	items, err := ParseBatch(json.RawMessage(`[{"method":"POST","relative_url":"page/1/posts","body":{"content":"hi"},"name":"p"},
		{"method":"GET","relative_url":"post/{result=p:$.id}?fields=id"}]`))
	if err != nil || len(items) != 2 || items[0].Name != "p" {
		t.Fatalf("ParseBatch = %+v, %v", items, err)
	}
	many := "[" + strings.TrimSuffix(strings.Repeat(`{"method":"GET","relative_url":"me"},`, MaxBatch+1), ",") + "]"
	for name, bad := range map[string]string{
		"not an array":           `{"method":"GET"}`,
		"empty":                  `[]`,
		"too many":               many,
		"bad method":             `[{"method":"PUT","relative_url":"me"}]`,
		"no url":                 `[{"method":"GET"}]`,
		"unknown key":            `[{"method":"GET","relative_url":"me","headers":[]}]`,
		"duplicate name":         `[{"method":"GET","relative_url":"me","name":"a"},{"method":"GET","relative_url":"me","name":"a"}]`,
		"forward reference":      `[{"method":"GET","relative_url":"post/{result=b:$.id}"},{"method":"GET","relative_url":"me","name":"b"}]`,
		"reference to a nothing": `[{"method":"GET","relative_url":"post/{result=zz:$.id}"}]`,
	} {
		if _, err := ParseBatch(json.RawMessage(bad)); err == nil {
			t.Errorf("%s: ParseBatch accepted %s", name, bad)
		}
	}
}

func TestJSONPath(t *testing.T) {
	t.Parallel()
	var doc any
	_ = json.Unmarshal([]byte(`{"id":"1","data":[{"id":"a"},{"id":"b"}],"x":{"y":{"z":3}}}`), &doc)
	cases := map[string][]any{
		"$.id":         {"1"},
		"$.data.*.id":  {"a", "b"},
		"$.data[1].id": {"b"},
		"$.x.y.z":      {float64(3)},
		"$.missing":    nil,
	}
	for path, want := range cases {
		got, err := jsonPath(doc, path)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("jsonPath(%q) = %v, %v; want %v", path, got, err, want)
		}
	}
}

func FuzzParseFields(f *testing.F) {
	for _, s := range []string{"id", "id,name,posts.limit(5){id,content}", "a{b{c}}", "x.limit(1)", "{", "a,,b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fields, err := ParseFields(s)
		if err != nil {
			return
		}
		var walk func([]Field, int)
		walk = func(fs []Field, depth int) {
			if depth > maxFieldsDepth+1 {
				t.Fatalf("ParseFields(%q) nested %d deep", s, depth)
			}
			for _, f := range fs {
				if f.Name == "" || f.Limit < 0 || f.Limit > MaxLimit {
					t.Fatalf("ParseFields(%q) gave %+v", s, f)
				}
				walk(f.Sub, depth+1)
			}
		}
		walk(fields, 0)
	})
}

func FuzzParseBatch(f *testing.F) {
	f.Add(`[{"method":"GET","relative_url":"me","name":"a"},{"method":"GET","relative_url":"post/{result=a:$.id}"}]`)
	f.Add(`[{"method":"POST","relative_url":"page/1/posts","body":{"content":"x"}}]`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, s string) {
		items, err := ParseBatch(json.RawMessage(s))
		if err != nil {
			return
		}
		if len(items) == 0 || len(items) > MaxBatch {
			t.Fatalf("ParseBatch accepted %d items", len(items))
		}
		named := map[string]any{}
		for _, it := range items {
			// Substitution must never panic, whatever the references say.
			_, _ = substitute(it.RelativeURL, named, false)
			if it.Name != "" {
				named[it.Name] = map[string]any{"id": "1"}
			}
		}
	})
}
