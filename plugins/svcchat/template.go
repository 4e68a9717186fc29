package main

import (
	"fmt"
	"slices"

	"github.com/svcplatform/svc/plugins/internal/msgtemplate"
)

// The template lifecycle is shared with the other products that have
// business templates (package msgtemplate); these names keep svcchat's
// code reading as it did.
type (
	// TemplateStatus is where a template is in its review lifecycle.
	TemplateStatus = msgtemplate.Status
	// TemplateAction is what happens to a template.
	TemplateAction = msgtemplate.Action
)

// Template statuses and actions (msgtemplate's).
const (
	StatusDraft         = msgtemplate.Draft
	StatusPendingReview = msgtemplate.PendingReview
	StatusApproved      = msgtemplate.Approved
	StatusRejected      = msgtemplate.Rejected

	ActionApprove      = msgtemplate.Approve
	ActionSubmit       = msgtemplate.Submit
	ActionStaffApprove = msgtemplate.StaffApprove
	ActionStaffReject  = msgtemplate.StaffReject
	ActionEdit         = msgtemplate.Edit
	ActionGoLive       = msgtemplate.GoLive
)

// NextTemplateStatus is the shared lifecycle table (msgtemplate.Next).
func NextTemplateStatus(from TemplateStatus, action TemplateAction, live bool) (TemplateStatus, error) {
	return msgtemplate.Next(from, action, live)
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
	maxTemplateBody   = msgtemplate.MaxBody
	maxTemplateParams = msgtemplate.MaxParams
	maxParamValue     = msgtemplate.MaxParamValue // code points
	maxMessageText    = msgtemplate.MaxText       // code points (CONTRACT §5)
	maxTemplateName   = msgtemplate.MaxName
)

// parseBody splits a template body into text and placeholders.
func parseBody(body string) ([]msgtemplate.Segment, error) { return msgtemplate.ParseBody(body) }

// validParamName reports whether s may name a parameter.
func validParamName(s string) bool { return msgtemplate.ValidParamName(s) }

// checkDefinition checks a template's body against its declared params.
func checkDefinition(body string, params []string) (field string, err error) {
	return msgtemplate.CheckDefinition(body, params)
}

// render fills a template's placeholders with values, which must name
// exactly the template's params (msgtemplate.Render, shared with extmsg).
func render(t Template, values map[string]string) (string, error) {
	return msgtemplate.Render(t.Name, t.Body, t.Params, values)
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

func templateNameOK(s string) bool { return msgtemplate.ValidName(s) }
