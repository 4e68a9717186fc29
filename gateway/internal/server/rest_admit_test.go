package server

import (
	"net/http/httptest"
	"testing"
)

func TestAuthenticationComesFirstRESTRoutesMatchAsTheTranscoderDoes(t *testing.T) {
	routes := restRoutes{}
	add := func(method, tmpl string) *restRoute {
		segments, verb := parseTemplate(tmpl)
		rt := &restRoute{segments: segments, verb: verb}
		routes[method] = append(routes[method], rt)
		return rt
	}
	posts := add("GET", "/api/v1/pages/{page_id}/posts")
	one := add("GET", "/api/v1/pages/{page_id}/posts/latest")
	anyPost := add("GET", "/api/v1/pages/{page_id}/posts/{post_id}")
	named := add("GET", "/v1/{name=shelves/*/books/*}")
	rest := add("GET", "/files/{path=**}")
	verb := add("POST", "/v1/{name=pages/*}:publish")
	for _, c := range []struct {
		method, path string
		want         *restRoute
	}{
		{"GET", "/api/v1/pages/1/posts", posts},
		{"GET", "/api/v1/pages/1/posts/latest", one},
		{"GET", "/api/v1/pages/1/posts/7", anyPost},
		{"GET", "/v1/shelves/1/books/2", named},
		{"GET", "/files/a/b/c", rest},
		{"POST", "/v1/pages/3:publish", verb},
		{"POST", "/api/v1/pages/1/posts", nil},
		{"GET", "/api/v1/pages//posts", nil},
		{"GET", "/api/v1/pages/1/posts/7/8", nil},
		{"GET", "/v1/shelves/1/books", nil},
	} {
		if got := routes.match(httptest.NewRequest(c.method, c.path, nil)); got != c.want {
			t.Errorf("%s %s matched %+v, want %+v", c.method, c.path, got, c.want)
		}
	}
}
