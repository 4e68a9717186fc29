// Package e2e holds the end-to-end tests: they run the built gateway and
// plugin binaries as real processes on loopback against a real PostgreSQL,
// and speak to them as clients would — curl-style REST, generated Connect
// and gRPC clients, and third-party libraries.
package e2e
