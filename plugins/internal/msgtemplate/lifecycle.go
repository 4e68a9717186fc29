package msgtemplate

import (
	"errors"
	"fmt"
)

// Status is where a template is in its review lifecycle.
type Status string

// Template statuses.
const (
	Draft         Status = "draft"
	PendingReview Status = "pending_review"
	Approved      Status = "approved"
	Rejected      Status = "rejected"
)

// Action is what happens to a template.
type Action string

// Template actions.
const (
	// Approve: the app approves its own draft (development mode only).
	Approve Action = "approve"
	// Submit: the app submits its draft to staff review (live mode).
	Submit Action = "submit"
	// StaffApprove and StaffReject: a staff decision from a template queue.
	StaffApprove Action = "staff_approve"
	StaffReject  Action = "staff_reject"
	// Edit: a new body or params.
	Edit Action = "edit"
	// GoLive: the app went live. A template the app approved itself in
	// development goes to staff review (CONTRACT §15); the caller applies
	// it to those templates only, not to ones staff approved.
	GoLive Action = "go_live"
)

// rule is one row of the lifecycle table. mode says which app mode the row
// is for: "live", "development" or "" for both.
type rule struct {
	from   Status
	action Action
	mode   string
	to     Status
}

// lifecycle is the whole lifecycle; anything not listed is refused.
// Interface §3.1 gives the first three rows; CONTRACT §5 the staff
// rejection and "editing a rejected template makes it draft again";
// CONTRACT §15 the last: going live re-reviews what the app approved. Our
// decision: any edit returns a template to draft, so that no text is sent
// that nobody approved (an edit of a template under review withdraws it).
var lifecycle = []rule{
	{Draft, Approve, "development", Approved},
	{Draft, Submit, "live", PendingReview},
	{PendingReview, StaffApprove, "", Approved},
	{PendingReview, StaffReject, "", Rejected},
	{Draft, Edit, "", Draft},
	{Rejected, Edit, "", Draft},
	{Approved, Edit, "", Draft},
	{PendingReview, Edit, "", Draft},
	{Approved, GoLive, "live", PendingReview},
}

// ErrTransition is a lifecycle step the table does not allow.
var ErrTransition = errors.New("template lifecycle: step not allowed")

// Next is the lifecycle: the status after action on a template in status
// from, whose app is in live mode or not.
func Next(from Status, action Action, live bool) (Status, error) {
	mode := "development"
	if live {
		mode = "live"
	}
	for _, r := range lifecycle {
		if r.from == from && r.action == action && (r.mode == "" || r.mode == mode) {
			return r.to, nil
		}
	}
	return "", fmt.Errorf("%w: %s on a %s template of a %s app", ErrTransition, action, from, mode)
}

// Explain says in a sentence for the developer why Next refused action on
// a template in status from.
func Explain(from Status, action Action, live bool) string {
	switch {
	case action == Approve && live && from == Draft:
		return "A live app cannot approve its own template; submit it for review."
	case action == Submit && !live && from == Draft:
		return "An app in development mode approves its own drafts; submit is for live apps."
	case (action == StaffApprove || action == StaffReject) && from != PendingReview:
		return "The template is " + string(from) + ", not pending_review; there is nothing to decide."
	case action == GoLive:
		return "Only a template the app approved itself goes to review when the app goes live."
	case from == Rejected:
		return "The template was rejected; edit it to make it a draft again."
	}
	return "The template is " + string(from) + "; it cannot be " + map[Action]string{
		Approve: "approved", Submit: "submitted", StaffApprove: "approved", StaffReject: "rejected", Edit: "edited",
		GoLive: "reviewed again",
	}[action] + " now."
}
