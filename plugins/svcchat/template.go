package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// TemplateStatus is where a message template is in its review lifecycle
// (interface §3.1, CONTRACT §5).
type TemplateStatus string

// Template statuses.
const (
	StatusDraft         TemplateStatus = "draft"
	StatusPendingReview TemplateStatus = "pending_review"
	StatusApproved      TemplateStatus = "approved"
	StatusRejected      TemplateStatus = "rejected"
)

// TemplateAction is what happens to a template.
type TemplateAction string

// Template actions.
const (
	// ActionApprove: the app approves its own draft (console).
	ActionApprove TemplateAction = "approve"
	// ActionSubmit: the app submits its draft to staff review.
	ActionSubmit TemplateAction = "submit"
	// ActionStaffApprove and ActionStaffReject: a staff decision from the
	// template queue.
	ActionStaffApprove TemplateAction = "staff_approve"
	ActionStaffReject  TemplateAction = "staff_reject"
	// ActionEdit: a new body or params (through the Graph or the app's
	// platformConfig).
	ActionEdit TemplateAction = "edit"
)

// templateRule is one row of the lifecycle table. live says which app mode
// the row is for: "live", "development" or "" for both.
type templateRule struct {
	from   TemplateStatus
	action TemplateAction
	mode   string
	to     TemplateStatus
}

// templateLifecycle is the whole lifecycle; anything not listed is refused.
// Interface §3.1 gives the first three rows; CONTRACT §5 the staff
// rejection and "editing a rejected template makes it draft again". Our
// decision: any edit returns a template to draft, so that no text is sent
// that nobody approved (an edit of a template under review withdraws it).
var templateLifecycle = []templateRule{
	{StatusDraft, ActionApprove, "development", StatusApproved},
	{StatusDraft, ActionSubmit, "live", StatusPendingReview},
	{StatusPendingReview, ActionStaffApprove, "", StatusApproved},
	{StatusPendingReview, ActionStaffReject, "", StatusRejected},
	{StatusDraft, ActionEdit, "", StatusDraft},
	{StatusRejected, ActionEdit, "", StatusDraft},
	{StatusApproved, ActionEdit, "", StatusDraft},
	{StatusPendingReview, ActionEdit, "", StatusDraft},
}

// ErrTransition is a lifecycle step the table does not allow.
var ErrTransition = errors.New("template lifecycle: step not allowed")

// NextTemplateStatus is the template lifecycle: the status after action
// on a template in status from, for an app in live mode or not.
func NextTemplateStatus(from TemplateStatus, action TemplateAction, live bool) (TemplateStatus, error) {
	mode := "development"
	if live {
		mode = "live"
	}
	for _, r := range templateLifecycle {
		if r.from == from && r.action == action && (r.mode == "" || r.mode == mode) {
			return r.to, nil
		}
	}
	return "", fmt.Errorf("%w: %s on a %s template of a %s app", ErrTransition, action, from, mode)
}

// Template is a template an app may send.
type Template struct {
	Name   string
	Body   string
	Params []string
	Status TemplateStatus
	// Platform: one of the platform's defaults, not overridden by the app.
	Platform bool
}

// defaultTemplates are the platform's templates, approved for every app
// (CONTRACT §5).
var defaultTemplates = []Template{
	{Name: "hello_world", Body: "Hello World! Thanks for getting in touch.", Params: []string{},
		Status: StatusApproved, Platform: true},
	{Name: "order_update", Body: "Your order {{order_id}} is now {{status}}.", Params: []string{"order_id", "status"},
		Status: StatusApproved, Platform: true},
}

// Limits of templates and their parameters.
const (
	maxTemplateBody   = 1024 // code points, as WhatsApp's body limit
	maxTemplateParams = 20
	maxParamName      = 64
	maxParamValue     = 1024 // code points
	maxMessageText    = 2000 // code points (CONTRACT §5)
	maxTemplateName   = 512
)

// segment is a piece of a template body: literal text, or a placeholder
// when param is set.
type segment struct {
	text  string
	param string
}

// parseBody splits a template body into literal text and {{param}}
// placeholders. A parameter name is 1 to 64 of [a-z A-Z 0-9 _]. A "{{"
// that does not open a well-formed placeholder is an error, so that a typo
// never reaches a user as literal braces.
func parseBody(body string) ([]segment, error) {
	if !utf8.ValidString(body) {
		return nil, errors.New("the body is not valid UTF-8")
	}
	var out []segment
	rest := body
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			if strings.Contains(rest, "}}") {
				return nil, errors.New(`"}}" without a matching "{{"`)
			}
			if rest != "" {
				out = append(out, segment{text: rest})
			}
			return out, nil
		}
		if strings.Contains(rest[:i], "}}") {
			return nil, errors.New(`"}}" without a matching "{{"`)
		}
		if i > 0 {
			out = append(out, segment{text: rest[:i]})
		}
		rest = rest[i+2:]
		j := strings.Index(rest, "}}")
		if j < 0 {
			return nil, errors.New(`"{{" without a matching "}}"`)
		}
		name := rest[:j]
		if !validParamName(name) {
			return nil, fmt.Errorf("placeholder {{%s}} is not a parameter name (letters, digits, _; at most %d)", name, maxParamName)
		}
		out = append(out, segment{param: name})
		rest = rest[j+2:]
	}
}

func validParamName(s string) bool {
	if s == "" || len(s) > maxParamName {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// checkDefinition checks a template's body against its declared params:
// every placeholder is declared and every declared param is used.
func checkDefinition(body string, params []string) (field string, err error) {
	if n := utf8.RuneCountInString(body); n == 0 || n > maxTemplateBody {
		return "body", fmt.Errorf("body must be 1 to %d characters", maxTemplateBody)
	}
	segs, err := parseBody(body)
	if err != nil {
		return "body", err
	}
	if len(params) > maxTemplateParams {
		return "params", fmt.Errorf("a template has at most %d params", maxTemplateParams)
	}
	seen := map[string]bool{}
	for _, p := range params {
		if !validParamName(p) {
			return "params", fmt.Errorf("%q is not a parameter name (letters, digits, _; at most %d)", p, maxParamName)
		}
		if seen[p] {
			return "params", fmt.Errorf("%q is listed twice", p)
		}
		seen[p] = true
	}
	used := map[string]bool{}
	for _, s := range segs {
		if s.param == "" {
			continue
		}
		if !seen[s.param] {
			return "params", fmt.Errorf("the body uses {{%s}}, which params does not list", s.param)
		}
		used[s.param] = true
	}
	for _, p := range params {
		if !used[p] {
			return "params", fmt.Errorf("%q is not used in the body", p)
		}
	}
	return "", nil
}

// render fills a template's placeholders with values, which must name
// exactly the template's params. It returns the text and, on error, what is
// wrong with the values (a 132000 refusal).
func render(t Template, values map[string]string) (string, error) {
	for _, p := range t.Params {
		if _, ok := values[p]; !ok {
			return "", fmt.Errorf("templateParams lacks %q", p)
		}
	}
	for k, v := range values {
		if !slices.Contains(t.Params, k) {
			return "", fmt.Errorf("templateParams has %q, which template %s does not take", k, t.Name)
		}
		if n := utf8.RuneCountInString(v); n == 0 || n > maxParamValue {
			return "", fmt.Errorf("templateParams.%s must be 1 to %d characters", k, maxParamValue)
		}
	}
	segs, err := parseBody(t.Body)
	if err != nil {
		return "", fmt.Errorf("template %s is malformed: %w", t.Name, err)
	}
	var b strings.Builder
	for _, s := range segs {
		if s.param != "" {
			b.WriteString(values[s.param])
		} else {
			b.WriteString(s.text)
		}
	}
	text := b.String()
	if utf8.RuneCountInString(text) > maxMessageText {
		return "", fmt.Errorf("the rendered message is longer than %d characters", maxMessageText)
	}
	return text, nil
}

// configTemplates reads platformConfig.svcchat.templates: either an object
// keyed by template name, {"name": {"body": "…", "params": ["…"]}}, or an
// array of {"name", "body", "params"}. Entries that are not well-formed are
// returned in bad with the reason; they are not sendable.
func configTemplates(cfg map[string]any) (good []Template, bad map[string]string) {
	bad = map[string]string{}
	svcchat, _ := cfg["svcchat"].(map[string]any)
	if svcchat == nil {
		return nil, bad
	}
	add := func(name string, v any) {
		entry, ok := v.(map[string]any)
		if !ok {
			bad[name] = "not an object"
			return
		}
		if n, ok := entry["name"].(string); ok && name == "" {
			name = n
		}
		if name == "" || len(name) > maxTemplateName || !templateNameOK(name) {
			bad[fmt.Sprint(name)] = "the name must be lower-case letters, digits and _"
			return
		}
		body, _ := entry["body"].(string)
		var params []string
		switch ps := entry["params"].(type) {
		case nil:
		case []any:
			for _, p := range ps {
				s, ok := p.(string)
				if !ok {
					bad[name] = "params must be strings"
					return
				}
				params = append(params, s)
			}
		default:
			bad[name] = "params must be an array"
			return
		}
		if params == nil {
			params = []string{}
		}
		if _, err := checkDefinition(body, params); err != nil {
			bad[name] = err.Error()
			return
		}
		for _, t := range good {
			if t.Name == name {
				bad[name] = "declared twice"
				return
			}
		}
		good = append(good, Template{Name: name, Body: body, Params: params, Status: StatusDraft})
	}
	switch ts := svcchat["templates"].(type) {
	case map[string]any:
		names := make([]string, 0, len(ts))
		for k := range ts {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			add(k, ts[k])
		}
	case []any:
		for _, v := range ts {
			add("", v)
		}
	case nil:
	default:
		bad["templates"] = "platformConfig.svcchat.templates must be an object or an array"
	}
	return good, bad
}

func templateNameOK(s string) bool {
	if s == "" || len(s) > maxTemplateName {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
