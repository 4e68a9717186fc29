// Package gateway assembles the gateway process: configuration, logging,
// the database, the plugin host, the HTTP port and their orderly start and
// shutdown. It holds no logic of its own beyond wiring; each concern lives in
// its own package.
package gateway
