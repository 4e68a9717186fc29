package main

// Event types the plugin emits (CONTRACT §6).
const (
	EventMessageReceived = "page.message.received"
	EventPageMessageSent = "page.message.sent"
	EventMessageSent     = "svcchat.message.sent"
	EventOptIn           = "svcchat.opt_in"
	EventOptOut          = "svcchat.opt_out"
	EventHandover        = "svcchat.handover"
)

// handoverData is the data of svcchat.handover; holders are written svc_ai,
// page_human or app:<app id>.
type handoverData struct {
	ConversationID string `json:"conversationId"`
	PageID         string `json:"pageId"`
	Action         string `json:"action"`
	PreviousHolder string `json:"previousHolder"`
	NewHolder      string `json:"newHolder"`
	AppID          string `json:"appId"`
}

// pageMessageData is the data of page.message.received and
// page.message.sent.
type pageMessageData struct {
	ConversationID string  `json:"conversationId"`
	MessageID      string  `json:"messageId"`
	PageID         string  `json:"pageId"`
	UserID         string  `json:"userId"`
	Text           string  `json:"text"`
	Kind           string  `json:"kind"`
	TemplateName   *string `json:"templateName"`
}

// messageSentData is the data of svcchat.message.sent.
type messageSentData struct {
	Conversation struct {
		ID            string `json:"id"`
		PageID        string `json:"pageId"`
		UserID        string `json:"userId"`
		ControlHolder string `json:"controlHolder"`
	} `json:"conversation"`
	Message struct {
		ID           string  `json:"id"`
		Text         string  `json:"text"`
		Kind         string  `json:"kind"`
		TemplateName *string `json:"templateName"`
		AppID        string  `json:"appId"`
	} `json:"message"`
}

// optInData is the data of svcchat.opt_in and svcchat.opt_out.
type optInData struct {
	PageID   string   `json:"pageId"`
	UserID   string   `json:"userId"`
	Purposes []string `json:"purposes"`
	Source   string   `json:"source"`
}
