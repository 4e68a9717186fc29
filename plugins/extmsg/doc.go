// Command extmsg is the messaging-app product for businesses (CONTRACT
// §12): a business connects a messaging account to an app by embedded
// signup (/api/v1/business/extmsg/embedded-signup), and manages the
// account's message templates (/api/v1/business/extmsg/templates), which
// staff review in a queue (/api/v1/business/admin/extmsg/template-queue).
// It owns the extmsg schema (migrated at start) and serves
// svc.extmsg.v1.ExtmsgService to the gateway.
//
// # Templates
//
// The lifecycle is svcchat's (CONTRACT §5), from the one table both share
// in plugins/internal/msgtemplate, with the account's app in the role of
// svcchat's app: a new or edited template is a draft; while the app is in
// development mode its drafts are approved directly
// (…/templates/<name>/approve); once it is live they are submitted
// (…/templates/<name>/submit) and wait in the staff queue, oldest
// submission first, for approval or rejection with a reason. A step the
// table does not allow answers 409, code 10, subcode 2018305.
//
// # Who may act
//
// An account belongs to a business portfolio of the core (business/<id>):
// embedded signup names it and the gateway lets only its admins sign up
// (business_role); the people with a role on it act on its accounts, which
// the plugin asks the gateway (Host BusinessAccess), with a user token
// issued to the account's app or their own console session. Accounts of
// other businesses do not exist for the caller (404, code 100, subcode
// 33); a user token of another app is refused (403, code 10).
//
// It is started by the gateway, never by hand; it reads the database URL
// from SVC_DATABASE_URL, which the gateway passes on.
package main
