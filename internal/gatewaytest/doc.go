// Package gatewaytest starts the built gateway binary as a real process on
// loopback for end-to-end tests, with its plugins and a fresh database from
// pgtest, and stops it when the test ends.
//
// Binaries come from $SVC_BIN_DIR (set by `make test` after `make build`);
// without it they are built once per test process into a temporary folder,
// so `go test ./e2e/...` also works on its own.
package gatewaytest
