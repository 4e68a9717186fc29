// Package gateway assembles the gateway process: configuration, logging,
// the database, the plugin host, the HTTP port and their orderly start and
// shutdown. It holds no logic of its own beyond wiring; each concern lives in
// its own package. Beside Run are the commands an operator or developer runs
// next to a serving gateway, on its data folder and without its lock:
// Backup, DatabaseURL and Token (`gateway help` lists them).
package gateway
