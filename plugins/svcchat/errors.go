package main

import (
	"net/http"

	"github.com/svcplatform/svc/sdk"
)

// The refusals of CONTRACT §3 that need svcchat's own data. Messaging rules
// are reported as MessagingException, access rules as OAuthException.

func errPageUnavailable() *sdk.Error {
	return &sdk.Error{HTTPStatus: http.StatusForbidden, Code: 10, Subcode: 2018304, Type: sdk.TypeOAuth,
		Message: "The Page is not published or has chat surfacing turned off."}
}

func errWindowClosed() *sdk.Error {
	return &sdk.Error{HTTPStatus: http.StatusBadRequest, Code: 10, Subcode: 2018278, Type: sdk.TypeMessaging,
		Message: "This message is sent outside of the allowed window: the user has not written to the Page in the last 24 hours. Send a template message instead."}
}

func errOptedOut() *sdk.Error {
	return &sdk.Error{HTTPStatus: http.StatusBadRequest, Code: 551, Subcode: 1545041, Type: sdk.TypeMessaging,
		Message: "This person has opted out of messages from this Page."}
}

func errNoOptIn() *sdk.Error {
	return &sdk.Error{HTTPStatus: http.StatusBadRequest, Code: 10, Subcode: 2018301, Type: sdk.TypeMessaging,
		Message: "Template messages need the recipient's active opt-in to transactional messages from this Page."}
}

func errTemplateNotApproved(name string) *sdk.Error {
	return &sdk.Error{HTTPStatus: http.StatusForbidden, Code: 10, Subcode: 2018302, Type: sdk.TypeMessaging,
		Message: "Template " + name + " is not approved; a live app sends approved templates only."}
}

func errUnknownTemplate(name string) *sdk.Error {
	return &sdk.Error{HTTPStatus: http.StatusNotFound, Code: 132001, Type: sdk.TypeMessaging,
		Message: "Template " + name + " does not exist for this app.", Field: "templateName"}
}

func errTemplateParams(reason string) *sdk.Error {
	return &sdk.Error{HTTPStatus: http.StatusBadRequest, Code: 132000, Type: sdk.TypeMessaging,
		Message: "Invalid template parameters: " + reason + ".", Field: "templateParams"}
}

// errLifecycle: a template action the lifecycle does not allow now
// (CONTRACT §3 "staff decision on a template … that is not pending", used
// for every lifecycle conflict; see docs/design/messaging.md).
func errLifecycle(msg string) *sdk.Error {
	return &sdk.Error{HTTPStatus: http.StatusConflict, Code: 10, Subcode: 2018305, Type: sdk.TypeMessaging, Message: msg}
}

// errBlocked: the recipient blocked the Page; every send of the Page to
// them is refused (CONTRACT §16).
func errBlocked() *sdk.Error {
	return &sdk.Error{HTTPStatus: http.StatusForbidden, Code: 10, Subcode: 2018309, Type: sdk.TypeOAuth,
		Message: "This person is not accepting messages from this Page."}
}

// errWriteToBlocked: the user writes to a Page they blocked (the same
// subcode as the Page's refused sends: a block stops the thread both ways).
func errWriteToBlocked() *sdk.Error {
	return &sdk.Error{HTTPStatus: http.StatusForbidden, Code: 10, Subcode: 2018309, Type: sdk.TypeOAuth,
		Message: "You blocked this Page: unblock it to write to it."}
}

// errRestricted: staff restricted the Page; it cannot send until they lift
// the restriction (CONTRACT §16).
func errRestricted() *sdk.Error {
	return &sdk.Error{HTTPStatus: http.StatusForbidden, Code: 10, Subcode: 2018310, Type: sdk.TypeOAuth,
		Message: "This Page is restricted by platform staff and cannot send messages until the restriction is lifted."}
}
