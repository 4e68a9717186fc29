package graph

import (
	"fmt"
	"strings"
)

// MaxNodeLength bounds a node path.
const MaxNodeLength = 512

// ParseNode splits a node path such as "page/123/posts" into segments. One
// leading or trailing slash is tolerated; empty segments, "." and "..", and
// characters outside [A-Za-z0-9_.:@-] are refused.
func ParseNode(node string) ([]string, error) {
	if node == "" {
		return nil, fmt.Errorf("the node parameter is required")
	}
	if len(node) > MaxNodeLength {
		return nil, fmt.Errorf("the node is longer than %d bytes", MaxNodeLength)
	}
	trimmed := strings.TrimSuffix(strings.TrimPrefix(node, "/"), "/")
	if trimmed == "" {
		return nil, fmt.Errorf("the node %q is empty", node)
	}
	segs := strings.Split(trimmed, "/")
	for _, s := range segs {
		if s == "" || s == "." || s == ".." {
			return nil, fmt.Errorf("the node %q has an empty or relative segment", node)
		}
		for i := 0; i < len(s); i++ {
			if !segmentByte(s[i]) {
				return nil, fmt.Errorf("the node %q has an invalid character %q", node, s[i])
			}
		}
	}
	return segs, nil
}

func segmentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '.' || c == ':' || c == '@'
}

// Pattern is a compiled node pattern such as "page/{page_id}/posts".
type Pattern struct {
	text string
	segs []patternSegment
}

type patternSegment struct {
	literal string
	field   string // set for a {variable}
}

// CompilePattern parses a node pattern. Variables name request fields.
func CompilePattern(text string) (*Pattern, error) {
	segs, err := ParseNode(strings.NewReplacer("{", "", "}", "").Replace(text))
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %w", text, err)
	}
	raw := strings.Split(strings.Trim(text, "/"), "/")
	p := &Pattern{text: text}
	for i, r := range raw {
		if strings.HasPrefix(r, "{") && strings.HasSuffix(r, "}") && len(r) > 2 {
			p.segs = append(p.segs, patternSegment{field: segs[i]})
			continue
		}
		if strings.ContainsAny(r, "{}") {
			return nil, fmt.Errorf("pattern %q: a variable must be a whole segment", text)
		}
		p.segs = append(p.segs, patternSegment{literal: r})
	}
	return p, nil
}

// String returns the pattern as written.
func (p *Pattern) String() string { return p.text }

// match binds segs against p, or reports false.
func (p *Pattern) match(segs []string) (map[string]string, bool) {
	if len(segs) != len(p.segs) {
		return nil, false
	}
	var vars map[string]string
	for i, ps := range p.segs {
		if ps.field == "" {
			if ps.literal != segs[i] {
				return nil, false
			}
			continue
		}
		if vars == nil {
			vars = make(map[string]string, 2)
		}
		vars[ps.field] = segs[i]
	}
	return vars, true
}

// literals counts literal segments: more specific patterns win.
func (p *Pattern) literals() int {
	n := 0
	for _, s := range p.segs {
		if s.field == "" {
			n++
		}
	}
	return n
}

// shape is the pattern with variables blanked, to find duplicates.
func (p *Pattern) shape() string {
	parts := make([]string, len(p.segs))
	for i, s := range p.segs {
		if s.field != "" {
			parts[i] = "{}"
		} else {
			parts[i] = s.literal
		}
	}
	return strings.Join(parts, "/")
}
