package main

import "errors"

// ReportStatus is where a report to staff stands (CONTRACT §16).
type ReportStatus string

// Report statuses: open until staff decide; dismissed and restricted are
// final.
const (
	ReportOpen       ReportStatus = "open"
	ReportDismissed  ReportStatus = "dismissed"
	ReportRestricted ReportStatus = "restricted"
)

// ReportDecision is a staff decision on a report.
type ReportDecision string

// Staff decisions (DecideReport's decision).
const (
	DecisionDismiss  ReportDecision = "dismiss"
	DecisionRestrict ReportDecision = "restrict"
)

// The refusals of the two tables: the handlers answer them as 409, code 10,
// subcode 2018305 (errReportNotOpen, errNotRestricted), and as 400 naming
// decision (errNothingToRestrict).
var (
	errReportNotOpen     = errors.New("the report is not open")
	errNothingToRestrict = errors.New("the report concerns no Page")
	errNotRestricted     = errors.New("the Page is not restricted")
)

// reportRule is one row of the report table: from a status, a decision
// on a report that concerns a Page (or not) leads to a status, or is
// refused.
type reportRule struct {
	from         ReportStatus
	decision     ReportDecision
	concernsPage bool
	to           ReportStatus
	refusal      error
}

// reportTable: staff dismiss any open report, and restrict the Page an
// open report concerns (a Page's report, or the report of a Page's
// message); a person and a direct message are no Page to restrict. A
// decided report is final.
var reportTable = []reportRule{
	{ReportOpen, DecisionDismiss, true, ReportDismissed, nil},
	{ReportOpen, DecisionDismiss, false, ReportDismissed, nil},
	{ReportOpen, DecisionRestrict, true, ReportRestricted, nil},
	{ReportOpen, DecisionRestrict, false, ReportOpen, errNothingToRestrict},
	{ReportDismissed, DecisionDismiss, true, ReportDismissed, errReportNotOpen},
	{ReportDismissed, DecisionDismiss, false, ReportDismissed, errReportNotOpen},
	{ReportDismissed, DecisionRestrict, true, ReportDismissed, errReportNotOpen},
	{ReportDismissed, DecisionRestrict, false, ReportDismissed, errReportNotOpen},
	{ReportRestricted, DecisionDismiss, true, ReportRestricted, errReportNotOpen},
	{ReportRestricted, DecisionDismiss, false, ReportRestricted, errReportNotOpen},
	{ReportRestricted, DecisionRestrict, true, ReportRestricted, errReportNotOpen},
	{ReportRestricted, DecisionRestrict, false, ReportRestricted, errReportNotOpen},
}

// NextReportStatus is the report state machine: the status after a staff
// decision, or the refusal (the status is then unchanged).
func NextReportStatus(from ReportStatus, d ReportDecision, concernsPage bool) (ReportStatus, error) {
	for _, r := range reportTable {
		if r.from == from && r.decision == d && r.concernsPage == concernsPage {
			return r.to, r.refusal
		}
	}
	return from, errReportNotOpen // every listed (status, decision) pair is covered; unreachable
}

// RestrictionState is whether a Page may send.
type RestrictionState string

// A Page is unrestricted (no row) or restricted (a page_restrictions row).
const (
	Unrestricted RestrictionState = "unrestricted"
	Restricted   RestrictionState = "restricted"
)

// RestrictionAction changes a Page's restriction.
type RestrictionAction string

// Restriction actions: a staff restrict decision on a report, and staff
// lifting the restriction (LiftRestriction).
const (
	ActionRestrict RestrictionAction = "restrict"
	ActionLift     RestrictionAction = "lift"
)

// restrictionRule is one row of the restriction table.
type restrictionRule struct {
	from    RestrictionState
	action  RestrictionAction
	to      RestrictionState
	refusal error
}

// restrictionTable: a restrict decision restricts the Page, or keeps the
// restriction it has (a second report of the same Page); only a restricted
// Page can be lifted.
var restrictionTable = []restrictionRule{
	{Unrestricted, ActionRestrict, Restricted, nil},
	{Restricted, ActionRestrict, Restricted, nil},
	{Restricted, ActionLift, Unrestricted, nil},
	{Unrestricted, ActionLift, Unrestricted, errNotRestricted},
}

// NextRestriction is the restriction state machine: the state after an
// action, or the refusal (the state is then unchanged).
func NextRestriction(from RestrictionState, a RestrictionAction) (RestrictionState, error) {
	for _, r := range restrictionTable {
		if r.from == from && r.action == a {
			return r.to, r.refusal
		}
	}
	return from, errNotRestricted // every pair is listed; unreachable
}
