// Command pgtestd starts and stops the PostgreSQL server that one `make test` run shares, so
// that every test package (each its own process) clones its databases on one server instead of
// starting its own.
//
//	pgtestd start --dir DIR   start a Fast cluster in DIR, detached, and print its superuser URL
//	pgtestd stop --dir DIR    stop the server running in DIR (nothing to do is not an error)
//
// The Makefile is expected to call it like this (the URL is the only output on stdout; logs go
// to stderr; stop runs whether the tests pass or not, and the recipe keeps the tests' status):
//
//	PGTEST_DIR := .tmp/pg
//
//	test:
//		@url=$$(go run ./internal/cmd/pgtestd start --dir $(PGTEST_DIR)) || exit 1; \
//		SVC_TEST_DATABASE_URL="$$url" go test ./...; status=$$?; \
//		go run ./internal/cmd/pgtestd stop --dir $(PGTEST_DIR); exit $$status
//
// The server is a [pgembed] cluster with Options.Detach: it keeps running after pgtestd exits
// and listens only on a unix socket inside DIR. The cluster is kept between runs (the next start
// skips initdb and reuses the test templates whose names still match); remove DIR for a fresh
// one. If a run is killed before `stop`, the next `start` takes the old server over.
package main
