// Package pgembed runs a private PostgreSQL cluster from the PostgreSQL binaries installed on
// the machine, for the gateway's embedded default (no SVC_DATABASE_URL) and for tests.
//
// A cluster lives in one folder that pgembed owns entirely:
//
//	<Dir>/data             the data directory (created by initdb on first use)
//	<Dir>/run              the unix socket folder (or /tmp/svc-pg-<hash> as root, or when Dir is too deep)
//	<Dir>/log/postgres.log the server's log; initdb's output goes there too
//
// Everything the cluster holds is inside Dir: a copy of Dir is a copy of the cluster (taken
// stopped, or with [Backup] while it runs), and removing Dir removes it.
//
// The server never listens on TCP (listen_addresses is empty): clients reach it through the
// unix socket in the private socket folder, with trust authentication, as the superuser
// "postgres". [Cluster.URL] builds a pgx connection URL for it. Roles that are members of
// [PasswordGroup] are the exception: they must give their password (SCRAM-SHA-256).
//
// # Running as root
//
// PostgreSQL refuses to run as root. When the calling process is root, initdb and postgres run
// as "svc-postgres", an account of their own which Start creates with useradd (never the
// system's shared "postgres" account). The cluster folder is handed to that user. When a folder
// above it does not let that user pass (a clone under /root, or a 0700 temporary folder), the
// folder gets an access-list entry letting that user alone pass through (u:svc-postgres:--x):
// its mode is unchanged, and other users, plugins above all, still cannot enter it. Under root
// the socket folder is under /tmp, so that plugins, which run as users of their own, reach the
// socket without entering the data folder. Earlier versions kept such a cluster under
// /var/lib/svc behind a link at Dir; Start moves it back into Dir (see moveIn).
//
// # Crashes and ownership
//
// The server is a child process tied to its parent: if the parent dies, even by SIGKILL, the
// kernel sends the server SIGINT (a fast shutdown: sessions end, a checkpoint is written, and the
// next start needs no crash recovery). A server that survived anyway — a detached one, one whose
// parent was killed at an unlucky moment, or one run by another [Cluster] value — is found
// through its postmaster.pid and stopped by the next Start on the same folder, so a leftover
// never blocks a start. Lock files that name a live process which is not this cluster's server
// (a recycled pid after a reboot) are removed, because PostgreSQL would otherwise refuse to start.
//
// pgembed must not know anything about the schemas stored in the cluster: migrations belong to
// their owners (see sdk/migrate). It is Linux-only; elsewhere [Start] returns an error
// and callers should use an external server.
package pgembed
