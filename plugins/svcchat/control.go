package main

import (
	"net/http"

	"github.com/svcplatform/svc/sdk"
)

// ControlAction is what may change who answers a conversation (interface
// §3.3, CONTRACT §5).
type ControlAction string

// Control actions: the four Graph handover actions, the Page owner's mobile
// handover, an app's send and a Page manager's human reply.
const (
	ActionTake    ControlAction = "take_thread_control"
	ActionPass    ControlAction = "pass_thread_control"
	ActionRequest ControlAction = "request_thread_control"
	ActionReturn  ControlAction = "return_thread_control"
	// ActionSetMode: the Page owner's mobile handover names the holder.
	ActionSetMode ControlAction = "set_thread_control"
	// ActionAppSend: an app sends a Page message (interface §4 behaviour 4).
	ActionAppSend ControlAction = "app_message"
	// ActionHumanReply: a Page manager replies from the Page inbox.
	ActionHumanReply ControlAction = "human_reply"
	// ActionExpire: a take or pass with expires_in lapsed with no message
	// from the holder; control returns to what it was before (CONTRACT §14).
	ActionExpire ControlAction = "expire"
)

// Control is who answers a conversation: the holder, the holding app when
// the holder is an app, and the holder before the app took control (where
// return_thread_control goes by default).
type Control struct {
	Holder   Holder
	AppID    string
	Previous Holder
}

// String is the holder as events write it: svc_ai, page_human or
// app:<app id>.
func (c Control) String() string { return holderName(c.Holder, c.AppID) }

// ControlRequest is one control action with its actor and arguments.
type ControlRequest struct {
	Action ControlAction
	// ActorApp is the acting app (Graph actions and app sends).
	ActorApp string
	// TargetApp: pass_thread_control to this app (empty: page_human).
	TargetApp string
	// To: return_thread_control's returnTo, or the mobile handover's mode.
	To Holder
	// ExpiresIn: take or pass with expires_in (seconds; 0: no expiry).
	ExpiresIn int64
	// Restore: expire's target, the control before the take or pass that
	// set the expiry.
	Restore Control
}

// holderCondition is the left column of a row of the control table.
type holderCondition int

const (
	anyHolder        holderCondition = iota
	actorHolds                       // the acting app holds control
	actorDoesNotHold                 // anyone else holds control
)

// controlTarget is the right column of a row.
type controlTarget int

const (
	toActor          controlTarget = iota // the acting app
	toTargetOrHuman                       // TargetApp, else page_human
	unchanged                             // the holder stays (request)
	toReturnOrBefore                      // To, else the holder before the app, else page_human
	toMode                                // To
	toHuman                               // page_human
	toRestore                             // Restore (expire)
	refuseNotHolder                       // 409/10/2018300
)

// controlRule is one row of the control table; emit says whether the
// action emits svcchat.handover even when the holder stays the same.
type controlRule struct {
	action     ControlAction
	when       holderCondition
	to         controlTarget
	emitAlways bool
}

// controlTable is interface §3.3 completed by CONTRACT §5. Graph actions
// and the mobile handover always emit svcchat.handover; a send or a human
// reply emits it only when it changes the holder.
var controlTable = []controlRule{
	{ActionTake, anyHolder, toActor, true},
	{ActionPass, actorHolds, toTargetOrHuman, true},
	{ActionPass, actorDoesNotHold, refuseNotHolder, false},
	{ActionRequest, anyHolder, unchanged, true},
	{ActionReturn, actorHolds, toReturnOrBefore, true},
	{ActionReturn, actorDoesNotHold, refuseNotHolder, false},
	{ActionSetMode, anyHolder, toMode, true},
	{ActionAppSend, anyHolder, toActor, false},
	{ActionHumanReply, anyHolder, toHuman, false},
	{ActionExpire, anyHolder, toRestore, true},
}

// NextControl is the conversation-control state machine: the control after
// req, and whether to emit svcchat.handover. A refusal is an *sdk.Error.
func NextControl(cur Control, req ControlRequest) (Control, bool, error) {
	holds := cur.Holder == HolderApp && cur.AppID == req.ActorApp && req.ActorApp != ""
	for _, r := range controlTable {
		if r.action != req.Action || (r.when == actorHolds && !holds) || (r.when == actorDoesNotHold && holds) {
			continue
		}
		next := cur
		switch r.to {
		case refuseNotHolder:
			return cur, false, errNotHolder(req.Action)
		case unchanged:
			return cur, true, nil
		case toActor:
			next = toApp(cur, req.ActorApp)
		case toTargetOrHuman:
			if req.TargetApp != "" {
				next = toApp(cur, req.TargetApp)
			} else {
				next = Control{Holder: HolderHuman}
			}
		case toReturnOrBefore:
			h := req.To
			if h == "" {
				h = cur.Previous
			}
			if h == "" {
				h = HolderHuman
			}
			next = Control{Holder: h}
		case toMode:
			next = Control{Holder: req.To}
		case toHuman:
			next = Control{Holder: HolderHuman}
		case toRestore:
			next = req.Restore
			if next.Holder == "" {
				next = Control{Holder: HolderHuman}
			}
		}
		return next, r.emitAlways || next.String() != cur.String(), nil
	}
	return cur, false, sdk.Invalid("action", "Invalid parameter: action %q is not a handover action.", string(req.Action))
}

// toApp gives control to app, remembering the holder before the first app.
func toApp(cur Control, app string) Control {
	previous := cur.Previous
	if cur.Holder != HolderApp {
		previous = cur.Holder
	}
	return Control{Holder: HolderApp, AppID: app, Previous: previous}
}

func errNotHolder(a ControlAction) *sdk.Error {
	return &sdk.Error{HTTPStatus: http.StatusConflict, Code: 10, Subcode: 2018300, Type: sdk.TypeMessaging,
		Message: "Only the app that holds control of this conversation may " + string(a) + "."}
}

// Bounds of expires_in (CONTRACT §14).
const (
	minExpiresIn = 60
	maxExpiresIn = 86400
)

// expiresInFloor is the smallest expires_in accepted: minExpiresIn, or a
// lower value set with SVC_SVCCHAT_TEST_MIN_EXPIRES_IN for tests that
// watch an expiry happen (never set it in production).
var expiresInFloor int64 = minExpiresIn

// expiryMakers are the actions that may set an expiry.
func expiryMaker(a ControlAction) bool { return a == ActionTake || a == ActionPass }

// parseHandover checks a Graph handover body (interface §2.3): a known
// action; returnTo only with return_thread_control and only svc_ai or
// page_human; targetAppId only with pass_thread_control; expires_in only
// with take or pass, from 60 to 86,400 seconds.
func parseHandover(action string, returnTo, targetApp *string, expiresIn *int64) (ControlRequest, error) {
	req := ControlRequest{Action: ControlAction(action)}
	switch req.Action {
	case ActionTake, ActionPass, ActionRequest, ActionReturn:
	case "":
		return req, sdk.Invalid("action", "Invalid parameter: action is required (take_thread_control, pass_thread_control, request_thread_control or return_thread_control).")
	default:
		return req, sdk.Invalid("action", "Invalid parameter: action must be take_thread_control, pass_thread_control, request_thread_control or return_thread_control.")
	}
	if returnTo != nil {
		if req.Action != ActionReturn {
			return req, sdk.Invalid("returnTo", "Invalid parameter: returnTo is only allowed with return_thread_control.")
		}
		switch Holder(*returnTo) {
		case HolderAssistant, HolderHuman:
			req.To = Holder(*returnTo)
		default:
			return req, sdk.Invalid("returnTo", `Invalid parameter: returnTo must be "svc_ai" or "page_human".`)
		}
	}
	if targetApp != nil {
		if req.Action != ActionPass {
			return req, sdk.Invalid("targetAppId", "Invalid parameter: targetAppId is only allowed with pass_thread_control.")
		}
		if *targetApp == "" {
			return req, sdk.Invalid("targetAppId", "Invalid parameter: targetAppId must name an app.")
		}
		req.TargetApp = *targetApp
	}
	if expiresIn != nil {
		if !expiryMaker(req.Action) {
			return req, sdk.Invalid("expires_in", "Invalid parameter: expires_in is only allowed with take_thread_control and pass_thread_control.")
		}
		if *expiresIn < expiresInFloor || *expiresIn > maxExpiresIn {
			return req, sdk.Invalid("expires_in", "Invalid parameter: expires_in must be from %d to %d seconds.", expiresInFloor, maxExpiresIn)
		}
		req.ExpiresIn = *expiresIn
	}
	return req, nil
}
