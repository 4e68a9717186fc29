package e2e

import (
	"net/url"
	"testing"
)

// CONTRACT §1: ids are opaque; an id that names nothing, whatever its
// form, is "object does not exist" (404, code 100, subcode 33), never a
// format error.
func TestAnIdOfAnyFormThatNamesNothingIsNotFound(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	for _, tc := range []struct {
		name  string
		token string
		node  string
	}{
		{"a Page id with letters", w.owner, "page/abc/posts"},
		{"a Page id with a dash", w.owner, "page/12-34"},
		{"a post id with letters", w.owner, "post/p_9"},
		{"a numeric post id that names nothing", w.owner, "post/424242"},
		{"an app id with letters", w.c.App.APIKey, "app/not-an-app/config"},
		{"an app id with letters on the delivery log", w.c.App.APIKey, "app/x1/deliveries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, body := w.get(t, tc.token, url.Values{"node": {tc.node}})
			wantGraphError(t, res, body, 404, 100, 33)
		})
	}
	t.Run("a delivery id of another form", func(t *testing.T) {
		res, body := w.post(t, w.c.App.APIKey, map[string]any{"node": "delivery/not_a_delivery/replay"}, nil)
		wantGraphError(t, res, body, 404, 100, 33)
	})
}
