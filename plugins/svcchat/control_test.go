package main

import (
	"errors"
	"testing"

	"github.com/svcplatform/svc/sdk"
)

var (
	aiHolds    = Control{Holder: HolderAssistant}
	humanHolds = Control{Holder: HolderHuman}
	appAHolds  = Control{Holder: HolderApp, AppID: "A", Previous: HolderAssistant}
)

// TestControlTable checks every row of the conversation-control table.
func TestControlTable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		rule    string
		from    Control
		req     ControlRequest
		want    Control
		emit    bool
		subcode int // a refusal's subcode; 0: allowed
	}{
		{"take_thread_control makes the calling app the holder and remembers the holder before it", aiHolds,
			ControlRequest{Action: ActionTake, ActorApp: "A"}, appAHolds, true, 0},
		{"take_thread_control from another app keeps the holder before the first app", appAHolds,
			ControlRequest{Action: ActionTake, ActorApp: "B"}, Control{Holder: HolderApp, AppID: "B", Previous: HolderAssistant}, true, 0},
		{"take_thread_control by the holder changes nothing and still emits", appAHolds,
			ControlRequest{Action: ActionTake, ActorApp: "A"}, appAHolds, true, 0},
		{"pass_thread_control by the holder goes to page_human by default", appAHolds,
			ControlRequest{Action: ActionPass, ActorApp: "A"}, humanHolds, true, 0},
		{"pass_thread_control by the holder goes to targetAppId", appAHolds,
			ControlRequest{Action: ActionPass, ActorApp: "A", TargetApp: "B"}, Control{Holder: HolderApp, AppID: "B", Previous: HolderAssistant}, true, 0},
		{"pass_thread_control by an app that does not hold control is refused with 2018300", appAHolds,
			ControlRequest{Action: ActionPass, ActorApp: "B"}, appAHolds, false, 2018300},
		{"pass_thread_control while the assistant holds control is refused with 2018300", aiHolds,
			ControlRequest{Action: ActionPass, ActorApp: "A"}, aiHolds, false, 2018300},
		{"request_thread_control leaves the holder and emits (the holder is notified)", appAHolds,
			ControlRequest{Action: ActionRequest, ActorApp: "B"}, appAHolds, true, 0},
		{"return_thread_control by the holder goes to returnTo", appAHolds,
			ControlRequest{Action: ActionReturn, ActorApp: "A", To: HolderHuman}, humanHolds, true, 0},
		{"return_thread_control without returnTo goes to the holder before the app", appAHolds,
			ControlRequest{Action: ActionReturn, ActorApp: "A"}, aiHolds, true, 0},
		{"return_thread_control with no holder before the app goes to page_human", Control{Holder: HolderApp, AppID: "A"},
			ControlRequest{Action: ActionReturn, ActorApp: "A"}, humanHolds, true, 0},
		{"return_thread_control by an app that does not hold control is refused with 2018300", humanHolds,
			ControlRequest{Action: ActionReturn, ActorApp: "A", To: HolderAssistant}, humanHolds, false, 2018300},
		{"the Page owner's mobile handover sets the holder named by mode", appAHolds,
			ControlRequest{Action: ActionSetMode, To: HolderAssistant}, aiHolds, true, 0},
		{"the mobile handover to the current holder still emits", humanHolds,
			ControlRequest{Action: ActionSetMode, To: HolderHuman}, humanHolds, true, 0},
		{"an app's send makes it the holder and emits the change", humanHolds,
			ControlRequest{Action: ActionAppSend, ActorApp: "A"}, Control{Holder: HolderApp, AppID: "A", Previous: HolderHuman}, true, 0},
		{"an app's send while it holds control emits nothing", appAHolds,
			ControlRequest{Action: ActionAppSend, ActorApp: "A"}, appAHolds, false, 0},
		{"a human reply makes page_human the holder", appAHolds,
			ControlRequest{Action: ActionHumanReply}, humanHolds, true, 0},
		{"a human reply while page_human holds control emits nothing", humanHolds,
			ControlRequest{Action: ActionHumanReply}, humanHolds, false, 0},
		{"an expiry returns control to the state before the take or pass", Control{Holder: HolderApp, AppID: "B", Previous: HolderAssistant},
			ControlRequest{Action: ActionExpire, Restore: appAHolds}, appAHolds, true, 0},
		{"an expiry with nothing to restore goes to page_human", appAHolds,
			ControlRequest{Action: ActionExpire}, humanHolds, true, 0},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			got, emit, err := NextControl(c.from, c.req)
			if c.subcode != 0 {
				var e *sdk.Error
				if !errors.As(err, &e) || e.HTTPStatus != 409 || e.Code != 10 || e.Subcode != c.subcode {
					t.Fatalf("err = %v; want 409 10/%d", err, c.subcode)
				}
				return
			}
			if err != nil || got != c.want || emit != c.emit {
				t.Fatalf("NextControl = %+v, emit %v, %v; want %+v, emit %v", got, emit, err, c.want, c.emit)
			}
		})
	}
	t.Run("every action of the table is tested", func(t *testing.T) {
		for _, r := range controlTable {
			found := false
			for _, c := range cases {
				found = found || c.req.Action == r.action
			}
			if !found {
				t.Errorf("no case for %s", r.action)
			}
		}
	})
}

func TestHandoverBodies(t *testing.T) {
	t.Parallel()
	s := func(v string) *string { return &v }
	n := func(v int64) *int64 { return &v }
	cases := []struct {
		rule             string
		action           string
		returnTo, target *string
		field            string // refused naming it; "" allowed
		expiresIn        *int64
	}{
		{"an unknown action is refused naming action", "grab", nil, nil, "action", nil},
		{"a missing action is refused naming action", "", nil, nil, "action", nil},
		{"returnTo with another action is refused naming returnTo", "take_thread_control", s("svc_ai"), nil, "returnTo", nil},
		{"an unknown returnTo is refused naming returnTo", "return_thread_control", s("app"), nil, "returnTo", nil},
		{"targetAppId with another action is refused naming targetAppId", "take_thread_control", nil, s("5"), "targetAppId", nil},
		{"an empty targetAppId is refused naming targetAppId", "pass_thread_control", nil, s(""), "targetAppId", nil},
		{"return_thread_control with returnTo page_human is accepted", "return_thread_control", s("page_human"), nil, "", nil},
		{"pass_thread_control with targetAppId is accepted", "pass_thread_control", nil, s("5"), "", nil},
		{"request_thread_control alone is accepted", "request_thread_control", nil, nil, "", nil},
		{"expires_in with take_thread_control is accepted from 60 s", "take_thread_control", nil, nil, "", n(60)},
		{"expires_in with pass_thread_control is accepted up to 86,400 s", "pass_thread_control", nil, nil, "", n(86400)},
		{"expires_in under 60 s is refused naming expires_in", "take_thread_control", nil, nil, "expires_in", n(59)},
		{"expires_in over a day is refused naming expires_in", "pass_thread_control", nil, nil, "expires_in", n(86401)},
		{"expires_in with return_thread_control is refused naming expires_in", "return_thread_control", nil, nil, "expires_in", n(600)},
		{"expires_in with request_thread_control is refused naming expires_in", "request_thread_control", nil, nil, "expires_in", n(600)},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			_, err := parseHandover(c.action, c.returnTo, c.target, c.expiresIn)
			if c.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var e *sdk.Error
			if !errors.As(err, &e) || e.HTTPStatus != 400 || e.Code != 100 || e.Field != c.field {
				t.Fatalf("err = %v; want 400/100 naming %s", err, c.field)
			}
		})
	}
}

// FuzzParseHandover: any body either parses into an action of the table
// or is refused with 400/100 naming a field; never anything else.
func FuzzParseHandover(f *testing.F) {
	f.Add("take_thread_control", "", false, "", false)
	f.Add("return_thread_control", "svc_ai", true, "", false)
	f.Add("pass_thread_control", "", false, "123", true)
	f.Add("request_thread_control", "page_human", true, "x", true)
	f.Add("\x00", "\xff", true, "", true)
	f.Fuzz(func(t *testing.T, action, returnTo string, hasReturn bool, target string, hasTarget bool) {
		var rt, ta *string
		if hasReturn {
			rt = &returnTo
		}
		if hasTarget {
			ta = &target
		}
		req, err := parseHandover(action, rt, ta, nil)
		if err != nil {
			var e *sdk.Error
			if !errors.As(err, &e) || e.HTTPStatus != 400 || e.Code != 100 || e.Field == "" {
				t.Fatalf("refusal %v is not 400/100 naming a field", err)
			}
			return
		}
		if _, _, err := NextControl(appAHolds, ControlRequest{Action: req.Action, ActorApp: "A", To: req.To, TargetApp: req.TargetApp}); err != nil {
			t.Fatalf("a parsed body %+v is not an action of the table: %v", req, err)
		}
	})
}
