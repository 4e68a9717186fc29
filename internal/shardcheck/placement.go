package shardcheck

import (
	"fmt"
	"regexp"
	"strings"
)

// Kind is where a table lives on a sharded cluster.
type Kind string

// The placements a table can have.
const (
	// Page tables are distributed by page_id and co-located with each other.
	Page Kind = "page"
	// Reference tables are copied to every node.
	Reference Kind = "reference"
	// Local tables stay on the coordinator.
	Local Kind = "local"
)

// Placement is one row of the table-placement list.
type Placement struct {
	// Table is "schema.table", or "*.table" for the table of that name in every schema
	// (*.schema_migrations, which the migration runner makes in each owner's schema).
	Table  string
	Kind   Kind
	Reason string
	// Line is the row's line in the document, counted from 1, for messages.
	Line int
}

// The markers around the list in docs/SCALING.md. Between them: a Markdown table whose first
// row is the header "| table | placement | reason |".
const (
	BeginMarker = "<!-- table-placement:begin -->"
	EndMarker   = "<!-- table-placement:end -->"
)

// tableName is a plain lower-case schema.table, or *.table: what PostgreSQL names an unquoted
// identifier, which is all our migrations use.
var tableName = regexp.MustCompile(`^(\*|[a-z_][a-z0-9_]*)\.[a-z_][a-z0-9_]*$`)

// ParsePlacements reads the table-placement list from a document (docs/SCALING.md). It refuses
// a document without exactly one list, a row that is not three cells, an unknown placement, a
// malformed table name, a row without a reason and a table listed twice, naming the line.
func ParsePlacements(doc string) ([]Placement, error) {
	lines := strings.Split(doc, "\n")
	begin, end := -1, -1
	for i, l := range lines {
		switch strings.TrimSpace(l) {
		case BeginMarker:
			if begin >= 0 {
				return nil, fmt.Errorf("line %d: a second %s: the document holds one list", i+1, BeginMarker)
			}
			begin = i
		case EndMarker:
			if begin < 0 || end >= 0 {
				return nil, fmt.Errorf("line %d: %s without a %s before it", i+1, EndMarker, BeginMarker)
			}
			end = i
		}
	}
	if begin < 0 || end < 0 {
		return nil, fmt.Errorf("no table-placement list: want the lines %s and %s around it", BeginMarker, EndMarker)
	}

	var out []Placement
	seen := map[string]int{}
	header := false
	for i := begin + 1; i < end; i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" {
			continue
		}
		cells, ok := splitRow(line)
		if !ok || len(cells) != 3 {
			return nil, fmt.Errorf("line %d: want a table row of three cells | table | placement | reason |", i+1)
		}
		if !header {
			if !strings.EqualFold(cells[0], "table") || !strings.EqualFold(cells[1], "placement") || !strings.EqualFold(cells[2], "reason") {
				return nil, fmt.Errorf("line %d: the list starts with the header | table | placement | reason |", i+1)
			}
			header = true
			continue
		}
		if isSeparator(cells) {
			continue
		}
		p := Placement{Table: strings.Trim(cells[0], "`"), Kind: Kind(strings.Trim(cells[1], "`")), Reason: cells[2], Line: i + 1}
		if !tableName.MatchString(p.Table) {
			return nil, fmt.Errorf("line %d: table %q: want schema.table (or *.table) in lower case", i+1, p.Table)
		}
		switch p.Kind {
		case Page, Reference, Local:
		default:
			return nil, fmt.Errorf("line %d: table %s: placement %q: want page, reference or local", i+1, p.Table, p.Kind)
		}
		if p.Reason == "" {
			return nil, fmt.Errorf("line %d: table %s: give the reason for its placement", i+1, p.Table)
		}
		if first, dup := seen[p.Table]; dup {
			return nil, fmt.Errorf("line %d: table %s is listed twice (first on line %d)", i+1, p.Table, first)
		}
		seen[p.Table] = p.Line
		out = append(out, p)
	}
	if !header {
		return nil, fmt.Errorf("line %d: the list is empty: want the header | table | placement | reason | and a row per table", begin+1)
	}
	return out, nil
}

// splitRow splits "| a | b | c |" into its trimmed cells. A cell may not hold a "|": reasons
// are prose without one.
func splitRow(line string) ([]string, bool) {
	if len(line) < 2 || line[0] != '|' || line[len(line)-1] != '|' {
		return nil, false
	}
	parts := strings.Split(line[1:len(line)-1], "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts, true
}

// isSeparator reports whether cells are the header's separator row (|---|:--|---|).
func isSeparator(cells []string) bool {
	for _, c := range cells {
		if c == "" || strings.Trim(c, "-:") != "" {
			return false
		}
	}
	return true
}
