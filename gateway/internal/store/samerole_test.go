package store

import "testing"

func TestAPluginsReplicaURLSignsInAsThePluginsRole(t *testing.T) {
	t.Parallel()
	got, err := SameRole("postgres://gw:gwpass@replica:5433/svc?sslmode=require",
		"postgres://svc_plugin_book_1:secret@primary:5432/svc", "postgres://gw:gwpass@primary:5432/svc")
	if err != nil || got != "postgres://svc_plugin_book_1:secret@replica:5433/svc?sslmode=require" {
		t.Fatalf("got %q, %v", got, err)
	}
	shared, err := SameRole("postgres://gw@replica/svc", "postgres://gw@primary/svc", "postgres://gw@primary/svc")
	if err != nil || shared != "postgres://gw@replica/svc" {
		t.Fatalf("a plugin sharing the gateway's role got %q, %v", shared, err)
	}
	if _, err := SameRole("host=replica dbname=svc", "postgres://p:s@primary/svc", "postgres://gw@primary/svc"); err == nil {
		t.Fatal("a keyword/value replica string was accepted")
	}
}
