// Package shardcheck checks that the database can be sharded by Page without a redesign
// (issue 17, docs/SCALING.md "Sharding by Page").
//
// Every table of the platform has a placement on a sharded cluster such as Citus, declared in
// the table-placement list of docs/SCALING.md:
//
//   - page: a Page's own data, distributed by page_id. All such tables are co-located, so one
//     Page's rows of every table sit on one node and a Page's transaction touches one node.
//   - reference: small, read everywhere, rarely written; copied to every node.
//   - local: stays on the coordinator (queues, logs, credentials, user data that is not a
//     Page's), reached by the gateway and the plugins through it.
//
// [ReadCatalog] reads what the rules need from pg_catalog, [ParsePlacements] reads the list
// from the document and [Check] applies the rules a distributed PostgreSQL imposes: a page
// table has a non-null page_id of type text (co-located tables share the distribution column's
// type) and page_id is in its primary key, in each of its unique constraints and unique
// indexes, and in each foreign key to another page table; no foreign key goes from a page table
// to a local one or from a reference or local table to a page one; a reference table's foreign
// key to a local table does not cascade. A table in no list, or a row naming no table, is a
// violation too, so that the document and the schema cannot drift apart.
//
// The test of this package applies every migration of the repository (core and each plugin's,
// as the running platform does) to a fresh database and checks it against docs/SCALING.md.
//
// This package reads the catalog only; it never changes a database.
package shardcheck
