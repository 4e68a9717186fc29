package shardcheck

import (
	"fmt"
	"strings"
)

// Rule names one rule of the check, for tests and messages.
type Rule string

// The rules. Each violation names the one it breaks.
const (
	// Unlisted: the table is in no list of the document.
	Unlisted Rule = "unlisted"
	// Stale: a row of the document names no table.
	Stale Rule = "stale row"
	// PageIDColumn: a page table has a non-null page_id of type text.
	PageIDColumn Rule = "page_id column"
	// PrimaryKey: a page table has a primary key, and page_id is in it.
	PrimaryKey Rule = "primary key"
	// UniqueKey: page_id is in every unique constraint and unique index of a page table.
	UniqueKey Rule = "unique key"
	// ForeignKeyRule: foreign keys stay where a sharded cluster can enforce them.
	ForeignKeyRule Rule = "foreign key"
)

// PageIDType is the type of page_id in every page table: co-located tables share the type of
// their distribution column, and the plugins carry Page ids as the opaque strings of the API.
const PageIDType = "text"

// Document is where the list lives, for messages.
const Document = "docs/SCALING.md"

// Violation is one table breaking one rule.
type Violation struct {
	Table string
	Rule  Rule
	// Problem says what is wrong, Fix what to do about it.
	Problem string
	Fix     string
}

func (v Violation) Error() string {
	return fmt.Sprintf("%s breaks the %s rule: %s. Fix: %s", v.Table, v.Rule, v.Problem, v.Fix)
}

// Check applies the rules to the tables of a database and the placements of the document and
// returns every violation, in table order.
func Check(tables []Table, placements []Placement) []Violation {
	exact := map[string]*Placement{}
	wildcard := map[string]*Placement{}
	used := map[*Placement]bool{}
	for i := range placements {
		p := &placements[i]
		if rest, ok := strings.CutPrefix(p.Table, "*."); ok {
			wildcard[rest] = p
		} else {
			exact[p.Table] = p
		}
	}
	placementOf := func(name string) *Placement {
		if p := exact[name]; p != nil {
			return p
		}
		_, rel, _ := strings.Cut(name, ".")
		return wildcard[rel]
	}
	kindOf := map[string]Kind{}
	for _, t := range tables {
		if p := placementOf(t.Name); p != nil {
			kindOf[t.Name] = p.Kind
			used[p] = true
		}
	}

	var out []Violation
	for _, t := range tables {
		kind, listed := kindOf[t.Name]
		if !listed {
			out = append(out, Violation{Table: t.Name, Rule: Unlisted,
				Problem: "the table is in no list of " + Document,
				Fix: fmt.Sprintf("if it holds a Page's data, give it a page_id %s NOT NULL column, put page_id in its primary key, "+
					"every unique constraint or index and every foreign key to another page table, and add the row "+
					"\"| %s | page | <whose data it is> |\" to the table-placement list of %s; otherwise add it there as "+
					"reference (small, read everywhere, rarely written) or local (stays on the coordinator) with the reason",
					PageIDType, t.Name, Document)})
			continue
		}
		if kind == Page {
			out = append(out, checkPageTable(t)...)
		}
		out = append(out, checkForeignKeys(t, kind, kindOf)...)
	}
	for i := range placements {
		p := &placements[i]
		if !used[p] {
			out = append(out, Violation{Table: p.Table, Rule: Stale,
				Problem: fmt.Sprintf("line %d of %s lists it, but the database has no such table", p.Line, Document),
				Fix:     "remove the row, or correct the table's name"})
		}
	}
	return out
}

// checkPageTable applies the rules of a table distributed by page_id.
func checkPageTable(t Table) []Violation {
	var out []Violation
	switch {
	case t.PageID == nil:
		out = append(out, Violation{Table: t.Name, Rule: PageIDColumn,
			Problem: "a page table has no page_id column",
			Fix:     fmt.Sprintf("add page_id %s NOT NULL in a new migration, or list the table as reference or local in %s", PageIDType, Document)})
		// Without the column every key rule fails too; one message is enough.
		return out
	case t.PageID.Type != PageIDType:
		out = append(out, Violation{Table: t.Name, Rule: PageIDColumn,
			Problem: fmt.Sprintf("page_id is %s, not %s like every other page table (co-located tables share the type of the distribution column)", t.PageID.Type, PageIDType),
			Fix:     fmt.Sprintf("change page_id to %s in a new migration", PageIDType)})
	case !t.PageID.NotNull:
		out = append(out, Violation{Table: t.Name, Rule: PageIDColumn,
			Problem: "page_id may be null, and a row without a Page has no shard",
			Fix:     "make page_id NOT NULL in a new migration"})
	}
	primary := false
	for _, k := range t.Keys {
		if k.Primary {
			primary = true
		}
		if k.HasPageID {
			continue
		}
		if k.Primary {
			out = append(out, Violation{Table: t.Name, Rule: PrimaryKey,
				Problem: fmt.Sprintf("the primary key %s does not contain page_id, so no shard can enforce it", k.Name),
				Fix:     "in a new migration, drop it and add it again with page_id first: PRIMARY KEY (page_id, …)"})
			continue
		}
		out = append(out, Violation{Table: t.Name, Rule: UniqueKey,
			Problem: fmt.Sprintf("the unique key %s does not contain page_id, so no shard can enforce it", k.Name),
			Fix:     "in a new migration, add page_id to its columns, or make it a plain index if ids are unique by other means (a sequence)"})
	}
	if !primary {
		out = append(out, Violation{Table: t.Name, Rule: PrimaryKey,
			Problem: "a page table has no primary key",
			Fix:     "add PRIMARY KEY (page_id, …) in a new migration"})
	}
	return out
}

// checkForeignKeys applies the rules of foreign keys between placements: a sharded cluster
// enforces a key only between co-located page tables joined on page_id, from a page table to a
// reference table, and among reference and local tables (where a reference table's key to a
// local one may not cascade).
func checkForeignKeys(t Table, kind Kind, kindOf map[string]Kind) []Violation {
	var out []Violation
	for _, fk := range t.ForeignKeys {
		to, listed := kindOf[fk.References]
		if !listed {
			// The referenced table's own violation says what to do first.
			continue
		}
		bad := func(problem, fix string) {
			out = append(out, Violation{Table: t.Name, Rule: ForeignKeyRule,
				Problem: fmt.Sprintf("foreign key %s to %s (%s): %s", fk.Name, fk.References, to, problem), Fix: fix})
		}
		switch {
		case kind == Page && to == Page && !fk.PairsPageID:
			bad("a key between page tables must join page_id to page_id, or it spans shards",
				"in a new migration, drop it and add it again as FOREIGN KEY (page_id, …) REFERENCES "+fk.References+" (page_id, …)")
		case kind == Page && to == Local:
			bad("a page table cannot reference a table that stays on the coordinator",
				"drop the key and check the reference in the code, or place "+fk.References+" as reference")
		case kind != Page && to == Page:
			bad("only a page table may reference a page table",
				"drop the key and check the reference in the code, or make "+t.Name+" a page table")
		case kind == Reference && to == Local && fk.Cascades:
			bad("a reference table's key to a local table cannot cascade",
				"drop the CASCADE (delete the referencing rows in the code), or place "+fk.References+" as reference")
		}
	}
	return out
}
