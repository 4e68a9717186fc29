package webhook

import "testing"

// A gateway no listener ever connected to sends every delivery to the
// endpoint: pick finds nobody (and does not write to maps it never made).
func TestPickWithoutListenersSendsToTheEndpoint(t *testing.T) {
	var h listenHub
	if l := h.pick(1, "book.post.created"); l != nil {
		t.Fatalf("pick found %v", l)
	}
	a := &listener{id: "a", app: 1, events: []string{"book.post.created"}}
	all := &listener{id: "all", app: 1}
	h.add(a)
	if h.pick(1, "svcchat.opt_in") != nil || h.pick(1, "book.post.created") != a {
		t.Fatal("a listener of book.post.created took another type, or not its own")
	}
	h.add(all)
	seen := map[string]bool{}
	for range 4 {
		seen[h.pick(1, "book.post.created").id] = true
	}
	if !seen["a"] || !seen["all"] || h.pick(1, "svcchat.opt_in") != all {
		t.Fatalf("listeners taken in turn: %v", seen)
	}
	h.remove(a)
	h.remove(all)
	if h.pick(1, "book.post.created") != nil {
		t.Fatal("a removed listener was picked")
	}
}
