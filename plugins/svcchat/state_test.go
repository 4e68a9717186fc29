package main

import (
	"errors"
	"fmt"
	"testing"
)

// The template lifecycle, row by row: every (status, action, mode) is
// checked, the allowed steps against interface §3.1 and CONTRACT §5, and
// everything else is refused.
func TestTemplateLifecycleRowByRow(t *testing.T) {
	t.Parallel()
	allowed := []struct {
		rule   string
		from   TemplateStatus
		action TemplateAction
		live   []bool
		to     TemplateStatus
	}{
		{"a development-mode app approves its own draft", StatusDraft, ActionApprove, []bool{false}, StatusApproved},
		{"a live app submits its draft to review", StatusDraft, ActionSubmit, []bool{true}, StatusPendingReview},
		{"staff approve a template under review", StatusPendingReview, ActionStaffApprove, []bool{false, true}, StatusApproved},
		{"staff reject a template under review", StatusPendingReview, ActionStaffReject, []bool{false, true}, StatusRejected},
		{"editing a draft keeps it a draft", StatusDraft, ActionEdit, []bool{false, true}, StatusDraft},
		{"editing a rejected template makes it a draft again", StatusRejected, ActionEdit, []bool{false, true}, StatusDraft},
		{"editing an approved template makes it a draft again", StatusApproved, ActionEdit, []bool{false, true}, StatusDraft},
		{"editing a template under review withdraws it to draft", StatusPendingReview, ActionEdit, []bool{false, true}, StatusDraft},
	}
	want := map[string]TemplateStatus{}
	for _, a := range allowed {
		for _, live := range a.live {
			key := fmt.Sprint(a.from, a.action, live)
			want[key] = a.to
			t.Run(fmt.Sprintf("%s (live=%v)", a.rule, live), func(t *testing.T) {
				got, err := NextTemplateStatus(a.from, a.action, live)
				if err != nil || got != a.to {
					t.Fatalf("%s %s live=%v = %q, %v; want %q", a.from, a.action, live, got, err, a.to)
				}
			})
		}
	}
	statuses := []TemplateStatus{StatusDraft, StatusPendingReview, StatusApproved, StatusRejected}
	actions := []TemplateAction{ActionApprove, ActionSubmit, ActionStaffApprove, ActionStaffReject, ActionEdit}
	for _, from := range statuses {
		for _, action := range actions {
			for _, live := range []bool{false, true} {
				if _, ok := want[fmt.Sprint(from, action, live)]; ok {
					continue
				}
				t.Run(fmt.Sprintf("%s on a %s template is refused (live=%v)", action, from, live), func(t *testing.T) {
					if got, err := NextTemplateStatus(from, action, live); !errors.Is(err, ErrTransition) {
						t.Fatalf("= %q, %v; want refused", got, err)
					}
				})
			}
		}
	}
}

func TestALiveAppCannotApproveItsOwnTemplate(t *testing.T) {
	t.Parallel()
	if _, err := NextTemplateStatus(StatusDraft, ActionApprove, true); !errors.Is(err, ErrTransition) {
		t.Fatal("a live app approved its own draft")
	}
	if msg := lifecycleMessage(StatusDraft, ActionApprove, true); msg != "A live app cannot approve its own template; submit it for review." {
		t.Fatalf("message = %q", msg)
	}
}

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
