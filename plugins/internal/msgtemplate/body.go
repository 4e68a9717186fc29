package msgtemplate

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Limits of templates and their parameters.
const (
	// MaxBody is a body's length in code points, as WhatsApp's body limit.
	MaxBody = 1024
	// MaxParams is how many parameters a template takes at most.
	MaxParams = 20
	// MaxParamName is a parameter name's length in bytes.
	MaxParamName = 64
	// MaxName is a template name's length in bytes.
	MaxName = 512
)

// Segment is a piece of a template body: literal Text, or a placeholder
// when Param is set.
type Segment struct {
	Text  string
	Param string
}

// ParseBody splits a template body into literal text and {{param}}
// placeholders. A parameter name is 1 to 64 of [a-z A-Z 0-9 _]. A "{{"
// that does not open a well-formed placeholder is an error, so that a typo
// never reaches a user as literal braces.
func ParseBody(body string) ([]Segment, error) {
	if !utf8.ValidString(body) {
		return nil, errors.New("the body is not valid UTF-8")
	}
	var out []Segment
	rest := body
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			if strings.Contains(rest, "}}") {
				return nil, errors.New(`"}}" without a matching "{{"`)
			}
			if rest != "" {
				out = append(out, Segment{Text: rest})
			}
			return out, nil
		}
		if strings.Contains(rest[:i], "}}") {
			return nil, errors.New(`"}}" without a matching "{{"`)
		}
		if i > 0 {
			out = append(out, Segment{Text: rest[:i]})
		}
		rest = rest[i+2:]
		j := strings.Index(rest, "}}")
		if j < 0 {
			return nil, errors.New(`"{{" without a matching "}}"`)
		}
		name := rest[:j]
		if !ValidParamName(name) {
			return nil, fmt.Errorf("placeholder {{%s}} is not a parameter name (letters, digits, _; at most %d)", name, MaxParamName)
		}
		out = append(out, Segment{Param: name})
		rest = rest[j+2:]
	}
}

// ValidParamName reports whether s may name a parameter.
func ValidParamName(s string) bool {
	if s == "" || len(s) > MaxParamName {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// ValidName reports whether s may name a template: lower-case letters,
// digits and underscores, at most MaxName bytes.
func ValidName(s string) bool {
	if s == "" || len(s) > MaxName {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// CheckDefinition checks a template's body against its declared params:
// every placeholder is declared and every declared param is used. On error
// it names the field at fault, "body" or "params".
func CheckDefinition(body string, params []string) (field string, err error) {
	if n := utf8.RuneCountInString(body); n == 0 || n > MaxBody {
		return "body", fmt.Errorf("body must be 1 to %d characters", MaxBody)
	}
	segs, err := ParseBody(body)
	if err != nil {
		return "body", err
	}
	if len(params) > MaxParams {
		return "params", fmt.Errorf("a template has at most %d params", MaxParams)
	}
	seen := map[string]bool{}
	for _, p := range params {
		if !ValidParamName(p) {
			return "params", fmt.Errorf("%q is not a parameter name (letters, digits, _; at most %d)", p, MaxParamName)
		}
		if seen[p] {
			return "params", fmt.Errorf("%q is listed twice", p)
		}
		seen[p] = true
	}
	used := map[string]bool{}
	for _, s := range segs {
		if s.Param == "" {
			continue
		}
		if !seen[s.Param] {
			return "params", fmt.Errorf("the body uses {{%s}}, which params does not list", s.Param)
		}
		used[s.Param] = true
	}
	for _, p := range params {
		if !used[p] {
			return "params", fmt.Errorf("%q is not used in the body", p)
		}
	}
	return "", nil
}

// Limits of a rendered message.
const (
	// MaxParamValue is a parameter value's length in code points.
	MaxParamValue = 1024
	// MaxText is a message's length in code points (CONTRACT §5).
	MaxText = 2000
)

// Render fills the placeholders of the template name (body, declaring
// params) with values, which must name exactly params. It returns the
// text and, on error, what is wrong with the values (a 132000 refusal).
func Render(name, body string, params []string, values map[string]string) (string, error) {
	for _, p := range params {
		if _, ok := values[p]; !ok {
			return "", fmt.Errorf("templateParams lacks %q", p)
		}
	}
	for k, v := range values {
		if !slices.Contains(params, k) {
			return "", fmt.Errorf("templateParams has %q, which template %s does not take", k, name)
		}
		if n := utf8.RuneCountInString(v); n == 0 || n > MaxParamValue {
			return "", fmt.Errorf("templateParams.%s must be 1 to %d characters", k, MaxParamValue)
		}
	}
	segs, err := ParseBody(body)
	if err != nil {
		return "", fmt.Errorf("template %s is malformed: %w", name, err)
	}
	var b strings.Builder
	for _, s := range segs {
		if s.Param != "" {
			b.WriteString(values[s.Param])
		} else {
			b.WriteString(s.Text)
		}
	}
	text := b.String()
	if utf8.RuneCountInString(text) > MaxText {
		return "", fmt.Errorf("the rendered message is longer than %d characters", MaxText)
	}
	return text, nil
}
