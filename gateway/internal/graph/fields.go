package graph

import (
	"fmt"
	"strconv"
)

// Field is one entry of a fields selection: a field or an edge, with
// optional modifiers such as .limit(5) and nested selections in braces.
type Field struct {
	Name string
	// Limit is set by .limit(n); 0 means not given.
	Limit int
	// Sub selects within an edge or object; nil selects its defaults.
	Sub []Field
}

// Limits of the fields parameter, to bound work per request.
const (
	maxFieldsLength = 2048
	maxFieldsDepth  = 4
)

// ParseFields parses "id,name,posts.limit(5){id,content}".
func ParseFields(s string) ([]Field, error) {
	if len(s) > maxFieldsLength {
		return nil, fmt.Errorf("fields is longer than %d bytes", maxFieldsLength)
	}
	p := fieldsParser{s: s}
	fields, err := p.list(0)
	if err != nil {
		return nil, err
	}
	if p.i != len(p.s) {
		return nil, fmt.Errorf("fields: unexpected %q at offset %d", p.s[p.i], p.i)
	}
	return fields, nil
}

type fieldsParser struct {
	s string
	i int
}

func (p *fieldsParser) list(depth int) ([]Field, error) {
	if depth > maxFieldsDepth {
		return nil, fmt.Errorf("fields: nested deeper than %d levels", maxFieldsDepth)
	}
	var out []Field
	seen := map[string]bool{}
	for {
		f, err := p.field(depth)
		if err != nil {
			return nil, err
		}
		if seen[f.Name] {
			return nil, fmt.Errorf("fields: %q is selected twice", f.Name)
		}
		seen[f.Name] = true
		out = append(out, f)
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		return out, nil
	}
}

func (p *fieldsParser) field(depth int) (Field, error) {
	name := p.name()
	if name == "" {
		if p.i < len(p.s) {
			return Field{}, fmt.Errorf("fields: expected a field name at offset %d, found %q", p.i, p.s[p.i])
		}
		return Field{}, fmt.Errorf("fields: expected a field name at the end")
	}
	f := Field{Name: name}
	for p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		mod := p.name()
		if mod != "limit" {
			return Field{}, fmt.Errorf("fields: unknown modifier %q on %q", mod, name)
		}
		if p.i >= len(p.s) || p.s[p.i] != '(' {
			return Field{}, fmt.Errorf("fields: expected ( after %s.limit", name)
		}
		p.i++
		start := p.i
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		n, err := strconv.Atoi(p.s[start:p.i])
		if err != nil || n < 1 || n > MaxLimit {
			return Field{}, fmt.Errorf("fields: %s.limit must be between 1 and %d", name, MaxLimit)
		}
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return Field{}, fmt.Errorf("fields: expected ) after %s.limit(%d", name, n)
		}
		p.i++
		f.Limit = n
	}
	if p.i < len(p.s) && p.s[p.i] == '{' {
		p.i++
		sub, err := p.list(depth + 1)
		if err != nil {
			return Field{}, err
		}
		if p.i >= len(p.s) || p.s[p.i] != '}' {
			return Field{}, fmt.Errorf("fields: missing } after %s{…", name)
		}
		p.i++
		f.Sub = sub
	}
	return f, nil
}

func (p *fieldsParser) name() string {
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' {
			p.i++
			continue
		}
		break
	}
	return p.s[start:p.i]
}
