// Package readpool gives a plugin the pool each read runs on: a PostgreSQL
// read replica when the gateway allows it, its primary otherwise.
//
// It is the plugin's half of read replicas; the gateway's half, which
// watches the replica and decides per call, is gateway/internal/replica.
//
// The gateway decides per call (pluginrt.MayReadReplica): only methods without
// side effects, only while a replica is configured and healthy by the
// gateway's background probe, and only once that replica has replayed past
// the caller's own last write (read-your-writes; see docs/design/storage.md).
// This package owns the plugin's half: the second pool, opened from
// SVC_DATABASE_REPLICA_URL (the replica with the plugin's own role), the
// choice of pool for a call, and the retry on the primary when the replica
// fails during a read (stopped, restarted, cancelled for a recovery
// conflict). It never writes to the replica and never decides on lag: the
// gateway does, once for every plugin.
package readpool
