package shardcheck

import (
	"context"
	"fmt"
	"sort"

	"github.com/jackc/pgx/v5"
)

// Table is what the rules need to know of one table.
type Table struct {
	// Name is "schema.table".
	Name string
	// PageID is the page_id column, nil when the table has none.
	PageID *Column
	// Keys are the primary key, the unique and exclusion constraints and the unique indexes.
	Keys []Key
	// ForeignKeys are the table's references to other tables.
	ForeignKeys []ForeignKey
}

// Column is a column's type as format_type shows it and its nullability.
type Column struct {
	Type    string
	NotNull bool
}

// Key is one index that enforces uniqueness (or exclusion).
type Key struct {
	// Name is the constraint's name, or the index's for a unique index without a constraint.
	Name    string
	Primary bool
	// HasPageID: page_id is one of the key columns (not an INCLUDE column, not inside an
	// expression).
	HasPageID bool
}

// ForeignKey is one foreign-key constraint.
type ForeignKey struct {
	Name string
	// References is the referenced table, "schema.table".
	References string
	// PairsPageID: the key maps this table's page_id to the referenced table's page_id.
	PairsPageID bool
	// Cascades: ON DELETE or ON UPDATE CASCADE.
	Cascades bool
}

// Querier is what ReadCatalog needs: a pool, a connection or a transaction.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// The catalog queries. They are plain SQL, not sqlc, because they read pg_catalog rather than
// a schema of ours. User tables only: system schemas and tables an extension owns (Citus's own
// metadata, say) are left out, and so are partitions, which follow their parent.
const (
	tablesQuery = `
SELECT c.oid, n.nspname || '.' || c.relname, format_type(a.atttypid, a.atttypmod), coalesce(a.attnotnull, false)
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'page_id' AND NOT a.attisdropped
WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
  AND n.nspname <> 'information_schema' AND n.nspname !~ '^pg_'
  AND NOT EXISTS (SELECT 1 FROM pg_depend d
                  WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')`

	keysQuery = `
SELECT i.indrelid, coalesce(con.conname, ic.relname), i.indisprimary,
       EXISTS (SELECT 1 FROM generate_series(0, i.indnkeyatts - 1) k
               JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attname = 'page_id' AND NOT a.attisdropped
               WHERE i.indkey[k] = a.attnum)
FROM pg_index i
JOIN pg_class ic ON ic.oid = i.indexrelid
LEFT JOIN pg_constraint con ON con.conindid = i.indexrelid AND con.conrelid = i.indrelid AND con.contype IN ('p', 'u', 'x')
WHERE i.indisunique OR i.indisexclusion`

	foreignKeysQuery = `
SELECT con.conrelid, con.conname, rn.nspname || '.' || rc.relname,
       EXISTS (SELECT 1 FROM generate_subscripts(con.conkey, 1) s
               WHERE con.conkey[s] = pa.attnum AND con.confkey[s] = fa.attnum),
       con.confdeltype = 'c' OR con.confupdtype = 'c'
FROM pg_constraint con
JOIN pg_class rc ON rc.oid = con.confrelid
JOIN pg_namespace rn ON rn.oid = rc.relnamespace
LEFT JOIN pg_attribute pa ON pa.attrelid = con.conrelid AND pa.attname = 'page_id' AND NOT pa.attisdropped
LEFT JOIN pg_attribute fa ON fa.attrelid = con.confrelid AND fa.attname = 'page_id' AND NOT fa.attisdropped
WHERE con.contype = 'f' AND con.conparentid = 0`
)

// ReadCatalog reads every user table of the database the querier is connected to, sorted by
// name.
func ReadCatalog(ctx context.Context, db Querier) ([]Table, error) {
	byOID := map[uint32]*Table{}
	if err := each(ctx, db, tablesQuery, func(row pgx.CollectableRow) error {
		var (
			oid     uint32
			name    string
			typ     *string
			notNull bool
		)
		if err := row.Scan(&oid, &name, &typ, &notNull); err != nil {
			return err
		}
		t := &Table{Name: name}
		if typ != nil {
			t.PageID = &Column{Type: *typ, NotNull: notNull}
		}
		byOID[oid] = t
		return nil
	}); err != nil {
		return nil, fmt.Errorf("shardcheck: read tables: %w", err)
	}
	if err := each(ctx, db, keysQuery, func(row pgx.CollectableRow) error {
		var (
			oid uint32
			k   Key
		)
		if err := row.Scan(&oid, &k.Name, &k.Primary, &k.HasPageID); err != nil {
			return err
		}
		if t := byOID[oid]; t != nil {
			t.Keys = append(t.Keys, k)
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("shardcheck: read keys: %w", err)
	}
	if err := each(ctx, db, foreignKeysQuery, func(row pgx.CollectableRow) error {
		var (
			oid uint32
			fk  ForeignKey
		)
		if err := row.Scan(&oid, &fk.Name, &fk.References, &fk.PairsPageID, &fk.Cascades); err != nil {
			return err
		}
		if t := byOID[oid]; t != nil {
			t.ForeignKeys = append(t.ForeignKeys, fk)
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("shardcheck: read foreign keys: %w", err)
	}

	out := make([]Table, 0, len(byOID))
	for _, t := range byOID {
		sort.Slice(t.Keys, func(i, j int) bool { return t.Keys[i].Name < t.Keys[j].Name })
		sort.Slice(t.ForeignKeys, func(i, j int) bool { return t.ForeignKeys[i].Name < t.ForeignKeys[j].Name })
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// each runs a query and calls fn for every row.
func each(ctx context.Context, db Querier, sql string, fn func(pgx.CollectableRow) error) error {
	rows, err := db.Query(ctx, sql)
	if err != nil {
		return err
	}
	_, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (struct{}, error) {
		return struct{}{}, fn(row)
	})
	return err
}

// compile-time check that a plain connection is a Querier too.
var _ Querier = (*pgx.Conn)(nil)
