// Package msgstatus is the message status state machine that the business
// messaging products share (svcchat's Page messages, extmsg's business
// messages; CONTRACT §14): where a message sent to a person is on its way
// to them, as one transition table. It holds no storage and no event
// names: a plugin keeps the status in its own schema, asks Next what a
// trigger does, and names the event of each status itself.
package msgstatus

// Status is where a message is on its way to the reader.
type Status string

// Message statuses.
const (
	Sent      Status = "sent"
	Delivered Status = "delivered"
	Read      Status = "read"
	Failed    Status = "failed"
)

// Trigger is what may move a message's status.
type Trigger string

// Triggers.
const (
	// Fetched: the recipient's app fetched a thread holding the message.
	Fetched Trigger = "fetched"
	// MarkedRead: the recipient marked the thread read.
	MarkedRead Trigger = "marked_read"
	// Undeliverable: the message can no longer be handed to the recipient.
	Undeliverable Trigger = "failed"
)

// Rule is one row of the table: trigger moves a message From To.
type Rule struct {
	From    Status
	Trigger Trigger
	To      Status
}

// Table is the message status state machine. A pair not listed changes
// nothing: a status never moves back, and failed and read are final. A
// read straight from sent skips delivered (read implies delivered). Only a
// sent message can fail: a delivered one has reached the recipient's app.
var Table = []Rule{
	{Sent, Fetched, Delivered},
	{Sent, MarkedRead, Read},
	{Delivered, MarkedRead, Read},
	{Sent, Undeliverable, Failed},
}

// Next is the status after trigger, and whether anything changed.
func Next(from Status, trigger Trigger) (Status, bool) {
	for _, r := range Table {
		if r.From == from && r.Trigger == trigger {
			return r.To, true
		}
	}
	return from, false
}

// MovedBy is the table read column-wise for one trigger: the statuses it
// moves and the status they all move to, so that one statement can apply
// the table to every message of a thread.
func MovedBy(trigger Trigger) (from []string, to Status) {
	for _, r := range Table {
		if r.Trigger == trigger {
			from = append(from, string(r.From))
			to = r.To
		}
	}
	return from, to
}
