package webhook

// Event types of CONTRACT §6 that the tests use. The gateway keeps no list
// of them: the types an app may subscribe to are those the loaded plugins
// declare in their manifests (Options.EventTypes). Exported to the external
// tests, in tests only.
const (
	EventPageMessageReceived      = "page.message.received"
	EventPageMessageSent          = "page.message.sent"
	EventSvcchatMessageSent       = "svcchat.message.sent"
	EventSvcchatOptIn             = "svcchat.opt_in"
	EventSvcchatOptOut            = "svcchat.opt_out"
	EventSvcchatHandover          = "svcchat.handover"
	EventBookPostCreated          = "book.post.created"
	EventWearablesCardDelivered   = "wearables.card.delivered"
	EventWearablesActionConfirmed = "wearables.action.confirmed"
)
