package graph

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// queryCases are query strings url.ParseQuery treats in each of its ways:
// escapes, repeats, empty pairs and values, semicolons, bad escapes, and
// more parameters than a pooled query holds.
var queryCases = []string{
	"", "node=page/1/posts&limit=10", "node=page%2F1%2Fposts&limit=10&after=MTA%3D",
	"a=1&a=2&b=&c", "&&a=1&", "a=1;b=2&c=3", "a=%zz&b=2", "%zz=1&b=2", "a+b=c+d", "=x&y=",
	"limit=1&limit=2&limit=3&node=x", strings.Repeat("p=1&", 20) + "node=x",
	strings.Repeat("k&", maxPooledParams-1) + "last=1",
}

func TestAGraphQueryIsParsedAsURLQueryParsesIt(t *testing.T) {
	t.Parallel()
	for _, raw := range queryCases {
		checkQueryAsURL(t, raw)
	}
}

func FuzzGraphQueryParsesAsURLQuery(f *testing.F) {
	for _, raw := range queryCases {
		f.Add(raw)
	}
	f.Fuzz(checkQueryAsURL)
}

// checkQueryAsURL parses raw twice through the pool (the second time with
// a query the first released) and compares both with url.ParseQuery's.
func checkQueryAsURL(t *testing.T, raw string) {
	want, _ := url.ParseQuery(raw)
	for range 2 {
		got, q := parseQuery(raw)
		if !reflect.DeepEqual(got, want) && (len(got) != 0 || len(want) != 0) {
			t.Fatalf("parseQuery(%q) = %v, want %v", raw, got, want)
		}
		releaseQuery(q)
	}
}
