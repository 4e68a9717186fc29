package main

import (
	"fmt"
	"net/http"

	"github.com/svcplatform/svc/sdk"
)

// Status is where a lens is in its review.
type Status string

// Lens statuses.
const (
	Draft    Status = "draft"
	InReview Status = "in_review"
	Approved Status = "approved"
	Rejected Status = "rejected"
)

// Action is a step on a lens: the partner's (edit, submit, withdraw) or
// staff's (approve, reject).
type Action string

// Lens actions.
const (
	Edit     Action = "edit"
	Submit   Action = "submit"
	Withdraw Action = "withdraw"
	Approve  Action = "approve"
	Reject   Action = "reject"
)

// review is the whole review of a lens; a step it does not list is
// refused. As in Meta's effect review, nothing reaches people unreviewed:
//   - a draft is edited freely and submitted;
//   - staff approve or reject what is in review (reject with a reason);
//   - a rejected lens is edited (which makes it a draft again, clearing
//     the reason) before it is submitted again: resubmitting unchanged
//     what was refused asks for the same answer;
//   - a lens in review or approved is not edited in place, which would
//     change what staff approved; the partner withdraws it (back to
//     draft, and off the carousel), edits and submits it again.
var review = map[Status]map[Action]Status{
	Draft:    {Edit: Draft, Submit: InReview},
	InReview: {Approve: Approved, Reject: Rejected, Withdraw: Draft},
	Approved: {Withdraw: Draft},
	Rejected: {Edit: Draft},
}

// next is the status after action on a lens in status from.
func next(from Status, action Action) (Status, error) {
	if to, ok := review[from][action]; ok {
		return to, nil
	}
	return "", errStep(from, action)
}

// errStep: the review does not allow action now (409, code 10, subcode
// 2018305, as for a message template's lifecycle).
func errStep(from Status, action Action) *sdk.Error {
	msg := fmt.Sprintf("The lens is %s; it cannot be %s now.", from, map[Action]string{Edit: "edited",
		Submit: "submitted", Withdraw: "withdrawn", Approve: "approved", Reject: "rejected"}[action])
	switch {
	case (action == Approve || action == Reject) && from != InReview:
		msg = "The lens is " + string(from) + ", not in_review; there is nothing to decide."
	case action == Edit && (from == InReview || from == Approved):
		msg = "The lens is " + string(from) + "; withdraw it to edit it."
	case action == Submit && from == Rejected:
		msg = "The lens was rejected; edit it before submitting it again."
	}
	return &sdk.Error{HTTPStatus: http.StatusConflict, Code: 10, Subcode: 2018305, Type: sdk.TypeGraphMethod, Message: msg}
}
