// Package config owns the gateway's settings: defaults, the optional JSON
// file given with --config, command-line flags (which win over the file),
// and the environment for secrets (SVC_DATABASE_URL, SVC_ADMIN_TOKEN), which
// are never read from flags so they stay out of process listings.
package config
