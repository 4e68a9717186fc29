package main

import (
	"testing"
)

// The template lifecycle is tested row by row in package msgtemplate.

// The opt-in state machine, row by row (interface §3.2, CONTRACT §5).
func TestOptInRowByRow(t *testing.T) {
	t.Parallel()
	rows := []struct {
		rule    string
		from    OptInStatus
		trigger OptInTrigger
		to      OptInStatus
		event   string
	}{
		{"a user's first message opts them in", OptInNone, TriggerUserMessage, OptInActive, EventOptIn},
		{"a message after an opt-out opts the user in again", OptInOptedOut, TriggerUserMessage, OptInActive, EventOptIn},
		{"a message while opted in changes nothing", OptInActive, TriggerUserMessage, OptInActive, ""},
		{"a mobile opt-in opts in", OptInNone, TriggerMobileOptIn, OptInActive, EventOptIn},
		{"a mobile opt-in after an opt-out opts in", OptInOptedOut, TriggerMobileOptIn, OptInActive, EventOptIn},
		{"a repeated opt-in changes nothing and emits nothing", OptInActive, TriggerMobileOptIn, OptInActive, ""},
		{"an opt-out without an opt-in is recorded", OptInNone, TriggerMobileOptOut, OptInOptedOut, EventOptOut},
		{"an opt-out ends an opt-in", OptInActive, TriggerMobileOptOut, OptInOptedOut, EventOptOut},
		{"a repeated opt-out changes nothing and emits nothing", OptInOptedOut, TriggerMobileOptOut, OptInOptedOut, ""},
	}
	if len(rows) != len(optInTable) {
		t.Fatalf("the table has %d rows, the test %d", len(optInTable), len(rows))
	}
	for _, r := range rows {
		t.Run(r.rule, func(t *testing.T) {
			to, ev := NextOptIn(r.from, r.trigger)
			if to != r.to || ev != r.event {
				t.Fatalf("%s + %s = %s, %q; want %s, %q", r.from, r.trigger, to, ev, r.to, r.event)
			}
		})
	}
}

func TestTemplatesNeedAnActiveTransactionalOptIn(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status   OptInStatus
		purposes []string
		want     bool
	}{
		{OptInActive, []string{"transactional"}, true},
		{OptInActive, []string{}, false},
		{OptInOptedOut, []string{"transactional"}, false},
		{OptInNone, nil, false},
	}
	for _, c := range cases {
		if got := allowsTemplates(c.status, c.purposes); got != c.want {
			t.Errorf("allowsTemplates(%s, %v) = %v", c.status, c.purposes, got)
		}
	}
}

func TestANewConversationIsHeldByTheAssistantOnlyWithInboxAutomation(t *testing.T) {
	t.Parallel()
	if initialHolder(true) != HolderAssistant || initialHolder(false) != HolderHuman {
		t.Fatal("initial holder does not follow inbox automation")
	}
	if holderName(HolderApp, "42") != "app:42" || holderName(HolderHuman, "") != "page_human" {
		t.Fatal("holder names")
	}
}
