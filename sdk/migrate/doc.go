// Package migrate applies forward-only SQL migrations to one owner's schema. The gateway
// migrates schema core with it, and every plugin, ours or a partner's, migrates its own schema
// (book, svcchat, …) at start-up from files embedded in its binary:
//
//	//go:embed migrations/*.sql
//	var migrations embed.FS
//
//	sub, _ := fs.Sub(migrations, "migrations")
//	applied, err := migrate.Apply(ctx, pool, "book", sub)
//
// Migration files sit at the root of the given file system and are named NNNN_name.sql: a
// version of at least four digits, then a lower-case name (0001_init.sql,
// 0002_post_indexes.sql). Other files are ignored. Each file is applied once, in version order,
// in its own transaction together with its row in <owner>.schema_migrations, with search_path
// set to the owner schema first, so unqualified names land there. A file must therefore not
// manage transactions itself, nor use statements that cannot run inside one (CREATE INDEX
// CONCURRENTLY).
//
// Migrations only move forward. Apply refuses to run when the database is ahead of the files
// (an older binary against a newer schema), when an applied file was edited, and when a new file
// is numbered below one already applied. Fix a mistake with a new migration, never by editing
// an old one. The one exception is an edit that changes nothing for a database that applied the
// old text (dropping a statement that the runner now does itself, say): the file then names the
// old text's SHA-256 in a line "-- migrate:replaces <hex>", and a database that recorded either
// checksum is current.
//
// Several processes may call Apply for the same owner at once (replicas of the gateway starting
// together): a PostgreSQL advisory lock keyed by the owner name lets one apply while the others
// wait, then find nothing left to do.
//
// This package is part of the plugin SDK, which partners import: it depends on pgx only and
// must not import the project's internal packages.
package migrate
