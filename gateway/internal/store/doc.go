// Package store owns the gateway's connection to PostgreSQL: it starts the
// embedded cluster when no SVC_DATABASE_URL is configured, creates the
// platform database in it, opens the pgx pool, and migrates the core schema.
// Product plugins reach the same database through the URL the gateway hands
// them; each migrates its own schema.
package store
