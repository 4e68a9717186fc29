package graph

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// pagingLinkByValues is the paging link as url.Values writes it: the
// definition appendPaging's links must meet byte for byte.
func pagingLinkByValues(publicURL string, q url.Values, node, set, drop, cursor string) string {
	v := make(url.Values, len(q)+1)
	for k, vs := range q {
		v[k] = vs
	}
	v.Set("node", node)
	v.Del(drop)
	v.Set(set, cursor)
	return strings.TrimRight(publicURL, "/") + Path + "?" + v.Encode()
}

// pagingLinks renders the paging object of p and returns its next and
// previous links.
func pagingLinks(t testing.TB, h *Handler, q url.Values, node string, p listPage) (next, previous string) {
	t.Helper()
	raw := h.appendPaging(nil, node, q, p)
	var doc struct {
		Next     string `json:"next"`
		Previous string `json:"previous"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("paging object %s is not JSON: %v", raw, err)
	}
	return doc.Next, doc.Previous
}

func TestPagingLinksAreTheQueryAsURLValuesEncodesIt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		publicURL string
		query     string
	}{
		{"the read of make bench", "http://127.0.0.1:8080", "node=page/1/posts&limit=10"},
		{"the cursor replaces the opposite one", "https://svc.example/", "node=page/1/posts&after=old&before=x"},
		{"other parameters stay, sorted and escaped", "https://svc.example", "zeta=1&node=a b&fields=id,name&alpha=%26%3D%2B&alpha=é~-_."},
		{"a node given twice becomes one", "http://h", "node=x&node=y&limit=2"},
		{"a parameter without a value", "http://h", "node=x&empty=&limit="},
		{"many parameters", "http://h", "node=x&a=1&b=2&c=3&d=4&e=5&f=6&g=7&h=8&i=9&j=10"},
		{"a public URL that JSON escapes", `http://h/"q"\`, "node=x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			node := "page/1/posts"
			h := New(Options{PublicURL: tc.publicURL})
			p := listPage{before: []byte("Y3Vyc29y+/="), after: []byte("a b&c"), hasNext: true, hasPrevious: true}
			next, previous := pagingLinks(t, h, q, node, p)
			if want := pagingLinkByValues(tc.publicURL, q, node, "after", "before", string(p.after)); next != want {
				t.Errorf("next = %s\nwant   %s", next, want)
			}
			if want := pagingLinkByValues(tc.publicURL, q, node, "before", "after", string(p.before)); previous != want {
				t.Errorf("previous = %s\nwant       %s", previous, want)
			}
		})
	}
}

func FuzzPagingLinks(f *testing.F) {
	f.Add("node=page/1/posts&limit=10", "page/1/posts", "MTAwMDAwMDk5MQ")
	f.Add("a=%00%ff&b=+&node=x", "x y", "c/d?e#f")
	f.Fuzz(func(t *testing.T, query, node, cursor string) {
		q, err := url.ParseQuery(query)
		if err != nil || cursor == "" {
			return
		}
		h := New(Options{PublicURL: "https://svc.example"})
		next, _ := pagingLinks(t, h, q, node, listPage{after: []byte(cursor), hasNext: true})
		if want := pagingLinkByValues("https://svc.example", q, node, "after", "before", cursor); next != want {
			t.Fatalf("next = %s\nwant   %s", next, want)
		}
	})
}
