package main

import "slices"

// OptInStatus is a user's standing with a Page (interface §3.2).
type OptInStatus string

// Opt-in statuses; OptInNone is the absence of a record.
const (
	OptInNone     OptInStatus = "none"
	OptInActive   OptInStatus = "active"
	OptInOptedOut OptInStatus = "opted_out"
)

// OptInTrigger is what may change a user's standing.
type OptInTrigger string

// Opt-in triggers.
const (
	// TriggerUserMessage: the user writes to the Page (source "message").
	TriggerUserMessage OptInTrigger = "user_message"
	// TriggerMobileOptIn and TriggerMobileOptOut: the mobile endpoints
	// (source "mobile").
	TriggerMobileOptIn  OptInTrigger = "mobile_opt_in"
	TriggerMobileOptOut OptInTrigger = "mobile_opt_out"
)

// optInRule is one row of the opt-in table; a change emits event.
type optInRule struct {
	from    OptInStatus
	trigger OptInTrigger
	to      OptInStatus
	event   string
}

// optInTable: interface §3.2 and CONTRACT §5. A repeat changes nothing and
// emits nothing; a user's message re-activates an opt-out ("until the user
// writes to the Page again"); an opt-out without any opt-in is recorded, so
// that the user's wish holds for opt-ins made later by anyone but the user.
var optInTable = []optInRule{
	{OptInNone, TriggerUserMessage, OptInActive, EventOptIn},
	{OptInOptedOut, TriggerUserMessage, OptInActive, EventOptIn},
	{OptInActive, TriggerUserMessage, OptInActive, ""},
	{OptInNone, TriggerMobileOptIn, OptInActive, EventOptIn},
	{OptInOptedOut, TriggerMobileOptIn, OptInActive, EventOptIn},
	{OptInActive, TriggerMobileOptIn, OptInActive, ""},
	{OptInNone, TriggerMobileOptOut, OptInOptedOut, EventOptOut},
	{OptInActive, TriggerMobileOptOut, OptInOptedOut, EventOptOut},
	{OptInOptedOut, TriggerMobileOptOut, OptInOptedOut, ""},
}

// NextOptIn is the opt-in state machine: the standing after trigger, and
// the event to emit ("" when nothing changed).
func NextOptIn(from OptInStatus, trigger OptInTrigger) (OptInStatus, string) {
	for _, r := range optInTable {
		if r.from == from && r.trigger == trigger {
			return r.to, r.event
		}
	}
	return from, "" // every (status, trigger) pair is listed; unreachable
}

// purposeTransactional is the opt-in purpose template messages need.
const purposeTransactional = "transactional"

// allowsTemplates tells whether an opt-in lets the Page send templates.
func allowsTemplates(status OptInStatus, purposes []string) bool {
	return status == OptInActive && slices.Contains(purposes, purposeTransactional)
}

// Holder is who answers a conversation (interface §3.3).
type Holder string

// Holders; HolderApp is an app, named by the conversation's holder app id.
const (
	HolderAssistant Holder = "svc_ai"
	HolderHuman     Holder = "page_human"
	HolderApp       Holder = "app"
)

// initialHolder is the holder of a new conversation (CONTRACT §5).
func initialHolder(inboxAutomation bool) Holder {
	if inboxAutomation {
		return HolderAssistant
	}
	return HolderHuman
}

// holderName is a holder as events write it: svc_ai, page_human or
// app:<app id> (CONTRACT §6).
func holderName(h Holder, appID string) string {
	if h == HolderApp {
		return "app:" + appID
	}
	return string(h)
}
