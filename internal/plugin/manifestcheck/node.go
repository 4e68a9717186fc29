package manifestcheck

import (
	"fmt"
	"iter"
	"strings"
)

// MaxNodeLength bounds a node path.
const MaxNodeLength = 512

// ParseNode splits a node path such as "page/123/posts" into segments: the
// syntax of a requested node and of a node pattern alike (the gateway's Graph
// endpoint parses every request's node with it). One leading or trailing
// slash is tolerated; empty segments, "." and "..", and
// characters outside [A-Za-z0-9_.:@-] are refused.
func ParseNode(node string) ([]string, error) {
	return AppendNode(make([]string, 0, strings.Count(node, "/")+1), node)
}

// AppendNode is ParseNode appending the segments to segs, so that a caller
// parsing a node per request can keep them in an array of its own.
func AppendNode(segs []string, node string) ([]string, error) {
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
	start := len(segs)
	for rest := trimmed; ; {
		seg, after, more := strings.Cut(rest, "/")
		segs = append(segs, seg)
		if !more {
			break
		}
		rest = after
	}
	for _, s := range segs[start:] {
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

// CompilePattern parses a node pattern: ParseNode's syntax, where a whole
// segment may be a {variable} naming a field of the request. A variable may
// appear once.
func CompilePattern(text string) (*Pattern, error) {
	segs, err := ParseNode(strings.NewReplacer("{", "", "}", "").Replace(text))
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %w", text, err)
	}
	raw := strings.Split(strings.Trim(text, "/"), "/")
	p := &Pattern{text: text}
	seen := map[string]bool{}
	for i, r := range raw {
		if strings.HasPrefix(r, "{") && strings.HasSuffix(r, "}") && len(r) > 2 {
			if seen[segs[i]] {
				return nil, fmt.Errorf("pattern %q: variable {%s} appears twice", text, segs[i])
			}
			seen[segs[i]] = true
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

// Vars lists the pattern's variables in order.
func (p *Pattern) Vars() []string {
	var out []string
	for _, s := range p.segs {
		if s.field != "" {
			out = append(out, s.field)
		}
	}
	return out
}

// Match binds node segments (from ParseNode) against p, or reports false.
// It allocates nothing: the variables are read from segs in place.
func (p *Pattern) Match(segs []string) (NodeVars, bool) {
	if len(segs) != len(p.segs) {
		return NodeVars{}, false
	}
	for i, ps := range p.segs {
		if ps.field == "" && ps.literal != segs[i] {
			return NodeVars{}, false
		}
	}
	return NodeVars{p: p, segs: segs}, true
}

// NodeVars are the variables of a node that matched a pattern; the zero
// value has none.
type NodeVars struct {
	p    *Pattern
	segs []string
}

// Get returns the value of the variable name, and whether there is one.
func (v NodeVars) Get(name string) (string, bool) {
	if v.p == nil {
		return "", false
	}
	for i, ps := range v.p.segs {
		if ps.field != "" && ps.field == name {
			return v.segs[i], true
		}
	}
	return "", false
}

// All yields each variable and its value, in the pattern's order.
func (v NodeVars) All() iter.Seq2[string, string] {
	return func(yield func(name, value string) bool) {
		if v.p == nil {
			return
		}
		for i, ps := range v.p.segs {
			if ps.field != "" && !yield(ps.field, v.segs[i]) {
				return
			}
		}
	}
}

// Len counts the variables.
func (v NodeVars) Len() int {
	n := 0
	for range v.All() {
		n++
	}
	return n
}

// Literals counts literal segments: where two patterns match a node, the
// one with more literals is the more specific and wins.
func (p *Pattern) Literals() int {
	n := 0
	for _, s := range p.segs {
		if s.field == "" {
			n++
		}
	}
	return n
}

// Shape is the pattern with its variables blanked ("page/{}/posts"): two
// patterns of one shape claim the same nodes.
func (p *Pattern) Shape() string {
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
