// Package replica decides which reads a PostgreSQL read replica may serve,
// and watches that replica.
//
// It owns: the background probe of the replica (reachable, a standby, how
// far behind the primary in bytes and seconds), the lag metrics, and the
// memory of which callers wrote recently, so that a caller reads its own
// writes. It must not touch identity, sessions or tokens: the gateway's own
// lookups always read the primary; and it never routes queries itself: the
// route table asks it once per call (Router.MayRead) and passes the answer
// to the plugin in the call (InvokeRequest.read_replica), whose SDK
// (internal/readpool) picks its pool.
//
// How read-your-writes holds, step by step:
//
//  1. A call to a method with side effects (anything not marked
//     idempotency_level NO_SIDE_EFFECTS) ends; the route table calls Wrote
//     with its caller. The caller is now pending: its reads go to the
//     primary. Nothing is queried on the request path.
//  2. The next probe reads the primary's WAL insert position
//     (pg_current_wal_insert_lsn) after the write had ended, so at or past
//     its commit, and gives that position to every caller pending from
//     before the probe began.
//  3. The probe reads the replica's replay position
//     (pg_last_wal_replay_lsn). Callers whose position it has reached are
//     forgotten: the replica holds their writes, and their reads may go
//     there again.
//
// A caller's reads thus stay on the primary for one or two probe intervals
// after its write, or longer while the replica lags. The memory is per
// gateway: with several gateways, a caller whose write and read land on two
// of them may read the replica before it holds the write (docs/design/storage.md).
package replica
