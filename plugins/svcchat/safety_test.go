package main

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	chatv1 "github.com/svcplatform/svc/gen/svc/chat/v1"
	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/plugintest"
)

// The report state machine, row by row (CONTRACT §16).
func TestReportStatusRowByRow(t *testing.T) {
	t.Parallel()
	rows := []struct {
		rule         string
		from         ReportStatus
		decision     ReportDecision
		concernsPage bool
		to           ReportStatus
		refusal      error
	}{
		{"staff dismiss an open report of a Page", ReportOpen, DecisionDismiss, true, ReportDismissed, nil},
		{"staff dismiss an open report of a person", ReportOpen, DecisionDismiss, false, ReportDismissed, nil},
		{"staff restrict the Page an open report concerns", ReportOpen, DecisionRestrict, true, ReportRestricted, nil},
		{"a report that concerns no Page cannot restrict", ReportOpen, DecisionRestrict, false, ReportOpen, errNothingToRestrict},
		{"a dismissed report of a Page is final", ReportDismissed, DecisionDismiss, true, ReportDismissed, errReportNotOpen},
		{"a dismissed report of a person is final", ReportDismissed, DecisionDismiss, false, ReportDismissed, errReportNotOpen},
		{"a dismissed report cannot restrict later", ReportDismissed, DecisionRestrict, true, ReportDismissed, errReportNotOpen},
		{"a dismissed report of a person cannot restrict", ReportDismissed, DecisionRestrict, false, ReportDismissed, errReportNotOpen},
		{"a restricted report cannot be dismissed later", ReportRestricted, DecisionDismiss, true, ReportRestricted, errReportNotOpen},
		{"a restricted report stays final for any subject", ReportRestricted, DecisionDismiss, false, ReportRestricted, errReportNotOpen},
		{"a restricted report cannot restrict twice", ReportRestricted, DecisionRestrict, true, ReportRestricted, errReportNotOpen},
		{"a restricted report refuses restrict for any subject", ReportRestricted, DecisionRestrict, false, ReportRestricted, errReportNotOpen},
	}
	if len(rows) != len(reportTable) {
		t.Fatalf("the table has %d rows, the test %d", len(reportTable), len(rows))
	}
	for _, r := range rows {
		t.Run(r.rule, func(t *testing.T) {
			to, err := NextReportStatus(r.from, r.decision, r.concernsPage)
			if to != r.to || err != r.refusal {
				t.Fatalf("%s + %s (Page %v) = %s, %v; want %s, %v", r.from, r.decision, r.concernsPage, to, err, r.to, r.refusal)
			}
		})
	}
}

// The restriction state machine, row by row (CONTRACT §16).
func TestRestrictionRowByRow(t *testing.T) {
	t.Parallel()
	rows := []struct {
		rule    string
		from    RestrictionState
		action  RestrictionAction
		to      RestrictionState
		refusal error
	}{
		{"a restrict decision restricts the Page", Unrestricted, ActionRestrict, Restricted, nil},
		{"a second restrict keeps the restriction", Restricted, ActionRestrict, Restricted, nil},
		{"staff lift a restriction", Restricted, ActionLift, Unrestricted, nil},
		{"a Page that is not restricted cannot be lifted", Unrestricted, ActionLift, Unrestricted, errNotRestricted},
	}
	if len(rows) != len(restrictionTable) {
		t.Fatalf("the table has %d rows, the test %d", len(restrictionTable), len(rows))
	}
	for _, r := range rows {
		t.Run(r.rule, func(t *testing.T) {
			to, err := NextRestriction(r.from, r.action)
			if to != r.to || err != r.refusal {
				t.Fatalf("%s + %s = %s, %v; want %s, %v", r.from, r.action, to, err, r.to, r.refusal)
			}
		})
	}
}

// parseSubject takes exactly one id, whatever is given, and names a field
// of the request when it refuses.
func FuzzParseSubject(f *testing.F) {
	f.Add("1", true, "", false, "", false)
	f.Add("", false, "2", true, "", false)
	f.Add("", false, "", false, "m_x", true)
	f.Add("1", true, "2", true, "", false)
	f.Add("", false, "", false, "", false)
	f.Fuzz(func(t *testing.T, page string, hasPage bool, user string, hasUser bool, msg string, hasMsg bool) {
		ids := []*string{nil, nil, nil}
		n := 0
		for i, v := range []struct {
			s   string
			has bool
		}{{page, hasPage}, {user, hasUser}, {msg, hasMsg}} {
			if v.has {
				ids[i] = &v.s
				n++
			}
		}
		sub, err := parseSubject(reportFields, ids)
		if n != 1 {
			var e *sdk.Error
			if err == nil || !asSDK(err, &e) || e.HTTPStatus != 400 || e.Code != 100 ||
				(e.Field != "pageId" && e.Field != "userId" && e.Field != "messageId") {
				t.Fatalf("%d ids: %v, %v; want 400/100 naming a field", n, sub, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("one id: %v", err)
		}
		for i, id := range ids {
			if id != nil && (sub.kind != reportFields[i][1] || sub.id != *id) {
				t.Fatalf("got %+v for %s=%q", sub, reportFields[i][0], *id)
			}
		}
	})
}

func asSDK(err error, e **sdk.Error) bool {
	se, ok := err.(*sdk.Error)
	*e = se
	return ok
}

// chatPlugin is the chat plugin as these tests see it through the host:
// the blocks of people, by the user who made them, and the direct
// messages users received.
type chatPlugin struct {
	mu     sync.Mutex
	blocks map[string]map[string]string // user -> blocked user -> created at
	// received: message id -> the one who received it and the message.
	received map[string]struct {
		to  string
		msg *chatv1.DirectMessage
	}
}

func newChatPlugin() *chatPlugin {
	return &chatPlugin{blocks: map[string]map[string]string{}, received: map[string]struct {
		to  string
		msg *chatv1.DirectMessage
	}{}}
}

func (c *chatPlugin) serve(hc plugintest.HostCall) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if hc.Caller.Kind != sdk.TokenKindSession {
		return nil, &sdk.Error{HTTPStatus: 403, Code: 200, Subcode: 2069001, Message: "sessions only"}
	}
	me := hc.Caller.UserID
	switch strings.TrimPrefix(hc.Procedure, "/svc.chat.v1.ChatService/") {
	case "BlockUser":
		var req chatv1.BlockUserRequest
		_ = proto.Unmarshal(hc.Request, &req)
		if req.GetUserId() == me {
			return nil, sdk.Invalid("userId", "yourself")
		}
		if c.blocks[me] == nil {
			c.blocks[me] = map[string]string{}
		}
		at, ok := c.blocks[me][req.GetUserId()]
		if !ok {
			at = time.Now().UTC().Format(time.RFC3339)
			c.blocks[me][req.GetUserId()] = at
		}
		return proto.Marshal(&chatv1.UserBlock{UserId: req.GetUserId(), CreatedAt: at})
	case "UnblockUser":
		var req chatv1.BlockUserRequest
		_ = proto.Unmarshal(hc.Request, &req)
		delete(c.blocks[me], req.GetUserId())
		return proto.Marshal(&chatv1.UnblockUserResponse{Success: true})
	case "ListUserBlocks":
		out := &chatv1.ListUserBlocksResponse{}
		for u, at := range c.blocks[me] {
			out.Data = append(out.Data, &chatv1.UserBlock{UserId: u, CreatedAt: at})
		}
		return proto.Marshal(out)
	case "GetReceivedMessage":
		var req chatv1.GetReceivedMessageRequest
		_ = proto.Unmarshal(hc.Request, &req)
		r, ok := c.received[req.GetMessageId()]
		if !ok || r.to != me {
			return nil, sdk.NotFound("Message " + req.GetMessageId())
		}
		return proto.Marshal(r.msg)
	}
	return nil, sdk.Unavailable("chat")
}

// UserInfo knows the users of these tests.
func (g *gatewayFacts) UserInfo(_ context.Context, userID string) (*sdk.UserInfo, error) {
	switch userID {
	case consumer, pageOwner, pageAdmin, "1", "901":
		return &sdk.UserInfo{Exists: true, Name: "User " + userID}, nil
	}
	return &sdk.UserInfo{}, nil
}

func safetySetup(t *testing.T) (*bundle, *chatPlugin) {
	t.Helper()
	b := setup(t)
	c := newChatPlugin()
	b.facts.mu.Lock()
	b.facts.chat = c.serve
	b.facts.mu.Unlock()
	return b, c
}

func (b *bundle) blockPage(t *testing.T, p sdk.Principal) *svcchatv1.BlockRecord {
	t.Helper()
	return must[*svcchatv1.BlockRecord](t, b, "Block", p, &svcchatv1.BlockRequest{PageId: strp(testPage)})
}

func (b *bundle) unblockPage(t *testing.T, p sdk.Principal) {
	t.Helper()
	must[*svcchatv1.UnblockResponse](t, b, "Unblock", p, &svcchatv1.BlockRequest{PageId: strp(testPage)})
}

func (b *bundle) inboxThreads(t *testing.T) int {
	t.Helper()
	return len(must[*svcchatv1.InboxResponse](t, b, "Inbox", user, &svcchatv1.InboxRequest{UserId: consumer}).GetThreads())
}

// Every kind of send of the Page to a user who blocked it is refused with
// 2018309: an app's session and template messages, a sender action and a
// manager's reply; unblocking lets them through again.
func TestEverySendOfABlockedPageIsRefusedWith2018309(t *testing.T) {
	t.Parallel()
	b, _ := safetySetup(t)
	cid := b.userWrites(t, "Hi").GetConversationId()
	b.blockPage(t, user)
	sends := map[string]func() error{
		"a session message": func() error {
			_, err := call[*svcchatv1.SendMessageResponse](t, b, "SendMessage", devSend, &svcchatv1.SendMessageRequest{PageId: testPage,
				RecipientUserId: strp(consumer), Text: strp("Hello")})
			return err
		},
		"a template message": func() error {
			_, err := call[*svcchatv1.SendMessageResponse](t, b, "SendMessage", devSend, template(devSend, "hello_world", nil))
			return err
		},
		"a sender action": func() error {
			_, err := call[*svcchatv1.SendMessageResponse](t, b, "SendMessage", devSend, &svcchatv1.SendMessageRequest{PageId: testPage,
				RecipientUserId: strp(consumer), SenderAction: strp(actionTypingOn)})
			return err
		},
		"a manager's reply": func() error {
			_, err := call[*svcchatv1.ReplyResponse](t, b, "Reply", sdk.Principal{Kind: sdk.TokenKindSession, UserID: pageAdmin},
				&svcchatv1.ReplyRequest{ConversationId: cid, Text: "Hello"})
			return err
		},
	}
	before := plugintest.Count(t, b.pool, "SELECT count(*) FROM svcchat.messages")
	for name, send := range sends {
		t.Run(name+" is refused", func(t *testing.T) { plugintest.WantRefusal(t, send(), 403, 10, 2018309) })
	}
	if n := plugintest.Count(t, b.pool, "SELECT count(*) FROM svcchat.messages"); n != before {
		t.Fatalf("refused sends stored %d messages", n-before)
	}
	b.unblockPage(t, user)
	for name, send := range sends {
		t.Run(name+" is accepted after the unblock", func(t *testing.T) {
			if err := send(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A template to an opted-in user who never wrote starts a conversation;
// a block refuses it as well, and leaves no conversation behind.
func TestATemplateThatWouldStartAThreadIsRefusedByABlock(t *testing.T) {
	t.Parallel()
	b, _ := safetySetup(t)
	must[*svcchatv1.OptInResponse](t, b, "OptIn", user, &svcchatv1.OptInRequest{PageId: testPage, Purposes: []string{"transactional"}})
	b.blockPage(t, user)
	_, err := call[*svcchatv1.SendMessageResponse](t, b, "SendMessage", devSend, template(devSend, "hello_world", nil))
	plugintest.WantRefusal(t, err, 403, 10, 2018309)
	if n := plugintest.Count(t, b.pool, "SELECT count(*) FROM svcchat.conversations"); n != 0 {
		t.Fatalf("%d conversations after the refused template", n)
	}
}

func TestTheBlockedPagesThreadsLeaveTheInboxAndComeBackOnUnblock(t *testing.T) {
	t.Parallel()
	b, _ := safetySetup(t)
	b.userWrites(t, "Hi")
	if n := b.inboxThreads(t); n != 1 {
		t.Fatalf("inbox before the block: %d threads", n)
	}
	b.blockPage(t, user)
	if n := b.inboxThreads(t); n != 0 {
		t.Fatalf("inbox with the Page blocked: %d threads", n)
	}
	b.unblockPage(t, user)
	if n := b.inboxThreads(t); n != 1 {
		t.Fatalf("inbox after the unblock: %d threads", n)
	}
}

func TestAUserCannotWriteToAPageTheyBlocked(t *testing.T) {
	t.Parallel()
	b, _ := safetySetup(t)
	b.blockPage(t, user)
	_, err := call[*svcchatv1.WriteToPageResponse](t, b, "WriteToPage", user, &svcchatv1.WriteToPageRequest{PageId: testPage, Text: "Hi"})
	plugintest.WantRefusal(t, err, 403, 10, 2018309)
	if n := plugintest.Count(t, b.pool, "SELECT count(*) FROM svcchat.conversations"); n != 0 {
		t.Fatalf("the refused write left %d conversations", n)
	}
	b.unblockPage(t, user)
	b.userWrites(t, "Hi again")
}

// The assistant's first reply is a send of the Page like any other: it
// stays silent for a user who blocked the Page, without asking the model.
func TestTheAssistantStaysSilentForAUserWhoBlockedThePage(t *testing.T) {
	t.Parallel()
	b, _ := safetySetup(t)
	a := withAssistant(t, b)
	b.facts.mu.Lock()
	b.facts.complete = modelAnswers("Hello from the model")
	b.facts.mu.Unlock()
	b.userWrites(t, "Hi")
	b.blockPage(t, user)
	if n := runJobs(t, a); n != 1 {
		t.Fatalf("%d jobs ran", n)
	}
	if got := b.assistantMessages(t); len(got) != 0 {
		t.Fatalf("the assistant answered a user who blocked the Page: %q", got)
	}
	b.facts.mu.Lock()
	defer b.facts.mu.Unlock()
	if b.facts.completeCalls != 0 {
		t.Fatalf("the model was asked %d times", b.facts.completeCalls)
	}
}

// A block names exactly one Page or person that exists, never oneself;
// anything else is refused and stores nothing. A repeat answers the block
// as it stands.
func TestABlockNamesOnePageOrPersonThatExists(t *testing.T) {
	t.Parallel()
	b, _ := safetySetup(t)
	refusals := []struct {
		rule    string
		req     *svcchatv1.BlockRequest
		status  int
		code    int
		subcode int
		field   string
	}{
		{"neither id is refused naming pageId", &svcchatv1.BlockRequest{}, 400, 100, 0, "pageId"},
		{"both ids are refused naming userId", &svcchatv1.BlockRequest{PageId: strp(testPage), UserId: strp("901")}, 400, 100, 0, "userId"},
		{"a Page that does not exist is not found", &svcchatv1.BlockRequest{PageId: strp("424242")}, 404, 100, 33, ""},
		{"blocking oneself is refused naming userId", &svcchatv1.BlockRequest{UserId: strp(consumer)}, 400, 100, 0, "userId"},
	}
	for _, r := range refusals {
		t.Run(r.rule, func(t *testing.T) {
			_, err := call[*svcchatv1.BlockRecord](t, b, "Block", user, r.req)
			if e := plugintest.WantRefusal(t, err, r.status, r.code, r.subcode); e.Field != r.field {
				t.Fatalf("field = %q, want %q", e.Field, r.field)
			}
		})
	}
	t.Run("an unblock names exactly one id too", func(t *testing.T) {
		for _, req := range []*svcchatv1.BlockRequest{{}, {PageId: strp(testPage), UserId: strp("901")}} {
			_, err := call[*svcchatv1.UnblockResponse](t, b, "Unblock", user, req)
			plugintest.WantRefusal(t, err, 400, 100, 0)
		}
	})
	t.Run("an unblock of what is not blocked changes nothing and succeeds", func(t *testing.T) {
		for _, req := range []*svcchatv1.BlockRequest{{PageId: strp("424242")}, {UserId: strp("901")}} {
			if _, err := call[*svcchatv1.UnblockResponse](t, b, "Unblock", user, req); err != nil {
				t.Fatal(err)
			}
		}
	})
	if n := plugintest.Count(t, b.pool, "SELECT count(*) FROM svcchat.page_blocks"); n != 0 {
		t.Fatalf("refused blocks stored %d rows", n)
	}
	first := b.blockPage(t, user)
	if again := b.blockPage(t, user); again.GetCreatedAt() != first.GetCreatedAt() || again.GetPageId() != testPage {
		t.Fatalf("a repeated block = %v, first %v", again, first)
	}
}

// The list shows the blocks of Pages (svcchat's) and of people (the chat
// plugin's, asked as the user) together, newest first; each user sees
// their own only.
func TestTheBlocksListShowsPagesAndPeopleOfTheUserOnly(t *testing.T) {
	t.Parallel()
	b, c := safetySetup(t)
	b.blockPage(t, user)
	if _, err := b.pool.Exec(context.Background(), "UPDATE svcchat.page_blocks SET created_at = now() - interval '1 hour'"); err != nil {
		t.Fatal(err)
	}
	person := must[*svcchatv1.BlockRecord](t, b, "Block", user, &svcchatv1.BlockRequest{UserId: strp("901")})
	if person.GetUserId() != "901" || person.PageId != nil || c.blocks[consumer]["901"] == "" {
		t.Fatalf("the person's block = %v; chat has %v", person, c.blocks)
	}
	list := must[*svcchatv1.ListBlocksResponse](t, b, "ListBlocks", user, &svcchatv1.ListBlocksRequest{}).GetData()
	if len(list) != 2 || list[0].GetUserId() != "901" || list[1].GetPageId() != testPage || list[0].PageId != nil || list[1].UserId != nil {
		t.Fatalf("blocks = %v", list)
	}
	if other := must[*svcchatv1.ListBlocksResponse](t, b, "ListBlocks", sdk.Principal{Kind: sdk.TokenKindSession, UserID: "901"},
		&svcchatv1.ListBlocksRequest{}).GetData(); len(other) != 0 {
		t.Fatalf("another user's list = %v", other)
	}
	must[*svcchatv1.UnblockResponse](t, b, "Unblock", user, &svcchatv1.BlockRequest{UserId: strp("901")})
	if list := must[*svcchatv1.ListBlocksResponse](t, b, "ListBlocks", user, &svcchatv1.ListBlocksRequest{}).GetData(); len(list) != 1 {
		t.Fatalf("blocks after unblocking the person = %v", list)
	}
}

func (b *bundle) reportPage(t *testing.T, reason string) *svcchatv1.ReportReceipt {
	t.Helper()
	return must[*svcchatv1.ReportReceipt](t, b, "Report", user, &svcchatv1.ReportRequest{PageId: strp(testPage), Reason: reason})
}

func (b *bundle) decide(t *testing.T, id, decision string) (*svcchatv1.DecideReportResponse, error) {
	t.Helper()
	return call[*svcchatv1.DecideReportResponse](t, b, "DecideReport", staff, &svcchatv1.DecideReportRequest{Id: id, Decision: decision})
}

// Staff restrict a reported Page: every send of it is refused with 2018310
// (before a block's 2018309: it says nothing of the user) until staff lift
// the restriction; the user may still write to it.
func TestARestrictedPageCannotSendUntilStaffLiftIt(t *testing.T) {
	t.Parallel()
	b, _ := safetySetup(t)
	cid := b.userWrites(t, "Hi").GetConversationId()
	rep := b.reportPage(t, "Spam")
	res, err := b.decide(t, rep.GetId(), "restrict")
	if err != nil || res.GetReport().GetStatus() != "restricted" || res.GetRestriction().GetPageId() != testPage ||
		res.GetRestriction().GetReportId() != rep.GetId() || res.GetRestriction().GetRestrictedBy() != staff.UserID || res.GetReport().DecidedAt == nil {
		t.Fatalf("restrict = %v, %v", res, err)
	}
	session := func() error {
		_, err := call[*svcchatv1.SendMessageResponse](t, b, "SendMessage", devSend, &svcchatv1.SendMessageRequest{PageId: testPage,
			RecipientUserId: strp(consumer), Text: strp("Hello")})
		return err
	}
	plugintest.WantRefusal(t, session(), 403, 10, 2018310)
	_, err = call[*svcchatv1.ReplyResponse](t, b, "Reply", sdk.Principal{Kind: sdk.TokenKindSession, UserID: pageAdmin},
		&svcchatv1.ReplyRequest{ConversationId: cid, Text: "Hello"})
	plugintest.WantRefusal(t, err, 403, 10, 2018310)
	t.Run("a restriction is answered before the user's block", func(t *testing.T) {
		b.blockPage(t, user)
		plugintest.WantRefusal(t, session(), 403, 10, 2018310)
		b.unblockPage(t, user)
	})
	b.userWrites(t, "Still here")

	restricted := must[*svcchatv1.ListRestrictionsResponse](t, b, "ListRestrictions", staff, &svcchatv1.ListRestrictionsRequest{}).GetData()
	if len(restricted) != 1 || restricted[0].GetPageId() != testPage {
		t.Fatalf("restrictions = %v", restricted)
	}
	t.Run("a second report's restrict keeps the first restriction", func(t *testing.T) {
		again := must[*svcchatv1.ReportReceipt](t, b, "Report", sdk.Principal{Kind: sdk.TokenKindSession, UserID: "901"},
			&svcchatv1.ReportRequest{PageId: strp(testPage), Reason: "Spam too"})
		res, err := b.decide(t, again.GetId(), "restrict")
		if err != nil || res.GetRestriction().GetReportId() != rep.GetId() {
			t.Fatalf("second restrict = %v, %v", res, err)
		}
	})
	must[*svcchatv1.LiftRestrictionResponse](t, b, "LiftRestriction", staff, &svcchatv1.LiftRestrictionRequest{PageId: testPage})
	if err := session(); err != nil {
		t.Fatalf("a send after the lift: %v", err)
	}
	t.Run("lifting a Page that is not restricted is refused with 2018305", func(t *testing.T) {
		_, err := call[*svcchatv1.LiftRestrictionResponse](t, b, "LiftRestriction", staff, &svcchatv1.LiftRestrictionRequest{PageId: testPage})
		plugintest.WantRefusal(t, err, 409, 10, 2018305)
	})
	t.Run("a decided report cannot be decided again", func(t *testing.T) {
		for _, d := range []string{"dismiss", "restrict"} {
			_, err := b.decide(t, rep.GetId(), d)
			plugintest.WantRefusal(t, err, 409, 10, 2018305)
		}
		if n := plugintest.Count(t, b.pool, "SELECT count(*) FROM svcchat.page_restrictions"); n != 0 {
			t.Fatalf("a refused decision restricted the Page again (%d rows)", n)
		}
	})
}

// The assistant stays silent on a restricted Page.
func TestTheAssistantStaysSilentOnARestrictedPage(t *testing.T) {
	t.Parallel()
	b, _ := safetySetup(t)
	a := withAssistant(t, b)
	b.userWrites(t, "Hi")
	if _, err := b.decide(t, b.reportPage(t, "Scam").GetId(), "restrict"); err != nil {
		t.Fatal(err)
	}
	runJobs(t, a)
	if got := b.assistantMessages(t); len(got) != 0 {
		t.Fatalf("the assistant answered for a restricted Page: %q", got)
	}
}

// A report names a Page or a person that exists, or a message the
// reporter received; any other message id is not found, whoever's it is.
// The staff queue shows what each concerns, oldest first.
func TestAReportNamesWhatTheReporterMayReport(t *testing.T) {
	t.Parallel()
	b, c := safetySetup(t)
	b.userWrites(t, "Hi")
	pageMsg := b.send(t, "Buy now!!!")
	c.received["dm_1"] = struct {
		to  string
		msg *chatv1.DirectMessage
	}{consumer, &chatv1.DirectMessage{Id: "dm_1", SenderUserId: "901", Text: "rude words"}}
	other := sdk.Principal{Kind: sdk.TokenKindSession, UserID: "901"}

	refusals := []struct {
		rule    string
		who     sdk.Principal
		req     *svcchatv1.ReportRequest
		status  int
		subcode int
	}{
		{"no subject is refused", user, &svcchatv1.ReportRequest{Reason: "x"}, 400, 0},
		{"two subjects are refused", user, &svcchatv1.ReportRequest{PageId: strp(testPage), UserId: strp("901"), Reason: "x"}, 400, 0},
		{"a Page that does not exist is not found", user, &svcchatv1.ReportRequest{PageId: strp("424242"), Reason: "x"}, 404, 33},
		{"a user who does not exist is not found", user, &svcchatv1.ReportRequest{UserId: strp("424242"), Reason: "x"}, 404, 33},
		{"reporting oneself is refused", user, &svcchatv1.ReportRequest{UserId: strp(consumer), Reason: "x"}, 400, 0},
		{"another user's Page message is not found", other, &svcchatv1.ReportRequest{MessageId: strp(pageMsg), Reason: "x"}, 404, 33},
		{"another user's direct message is not found", other, &svcchatv1.ReportRequest{MessageId: strp("dm_1"), Reason: "x"}, 404, 33},
		{"a message that does not exist is not found", user, &svcchatv1.ReportRequest{MessageId: strp("m_nothing"), Reason: "x"}, 404, 33},
	}
	for _, r := range refusals {
		t.Run(r.rule, func(t *testing.T) {
			_, err := call[*svcchatv1.ReportReceipt](t, b, "Report", r.who, r.req)
			plugintest.WantRefusal(t, err, r.status, 100, r.subcode)
		})
	}
	if n := plugintest.Count(t, b.pool, "SELECT count(*) FROM svcchat.reports"); n != 0 {
		t.Fatalf("refused reports stored %d rows", n)
	}

	byPage := b.reportPage(t, "Spam")
	byMsg := must[*svcchatv1.ReportReceipt](t, b, "Report", user, &svcchatv1.ReportRequest{MessageId: strp(pageMsg), Reason: "Scam"})
	byDM := must[*svcchatv1.ReportReceipt](t, b, "Report", user, &svcchatv1.ReportRequest{MessageId: strp("dm_1"), Reason: "Abuse"})
	byUser := must[*svcchatv1.ReportReceipt](t, b, "Report", user, &svcchatv1.ReportRequest{UserId: strp("901"), Reason: "Abuse"})
	if byPage.GetStatus() != "open" || byPage.GetCreatedAt() == "" {
		t.Fatalf("receipt = %v", byPage)
	}
	t.Run("reporting the same thing again answers the open report", func(t *testing.T) {
		if again := b.reportPage(t, "Spam again"); again.GetId() != byPage.GetId() {
			t.Fatalf("second report %s, first %s", again.GetId(), byPage.GetId())
		}
	})

	queue := must[*svcchatv1.ListReportsResponse](t, b, "ListReports", staff, &svcchatv1.ListReportsRequest{Limit: 3})
	got := queue.GetData()
	if len(got) != 3 || !queue.GetPaging().GetHasNext() || got[0].GetId() != byPage.GetId() || got[1].GetId() != byMsg.GetId() || got[2].GetId() != byDM.GetId() {
		t.Fatalf("queue = %v", queue)
	}
	if m := got[1]; m.GetKind() != "message" || m.GetPageId() != testPage || m.UserId != nil || m.GetMessageId() != pageMsg ||
		m.GetMessageText() != "Buy now!!!" || m.GetReporterUserId() != consumer || m.GetReason() != "Scam" {
		t.Fatalf("the Page message's report = %v", m)
	}
	if d := got[2]; d.GetKind() != "message" || d.PageId != nil || d.GetUserId() != "901" || d.GetMessageText() != "rude words" {
		t.Fatalf("the direct message's report = %v", d)
	}
	rest := must[*svcchatv1.ListReportsResponse](t, b, "ListReports", staff, &svcchatv1.ListReportsRequest{Limit: 3, After: queue.GetPaging().GetAfter()})
	if len(rest.GetData()) != 1 || rest.GetData()[0].GetId() != byUser.GetId() || rest.GetData()[0].GetKind() != "user" {
		t.Fatalf("second page = %v", rest)
	}

	t.Run("a report that concerns no Page can be dismissed, not restrict", func(t *testing.T) {
		for _, id := range []string{byUser.GetId(), byDM.GetId()} {
			_, err := b.decide(t, id, "restrict")
			if e := plugintest.WantRefusal(t, err, 400, 100, 0); e.Field != "decision" {
				t.Fatalf("field = %q", e.Field)
			}
			if res, err := b.decide(t, id, "dismiss"); err != nil || res.GetReport().GetStatus() != "dismissed" || res.Restriction != nil {
				t.Fatalf("dismiss = %v, %v", res, err)
			}
		}
	})
	t.Run("a Page message's report restricts its Page", func(t *testing.T) {
		res, err := b.decide(t, byMsg.GetId(), "restrict")
		if err != nil || res.GetRestriction().GetPageId() != testPage {
			t.Fatalf("restrict = %v, %v", res, err)
		}
	})
	t.Run("a report id that names nothing is not found", func(t *testing.T) {
		for _, id := range []string{"1", "abc", "6000000999"} {
			_, err := b.decide(t, id, "dismiss")
			plugintest.WantRefusal(t, err, 404, 100, 33)
		}
	})
	if left := must[*svcchatv1.ListReportsResponse](t, b, "ListReports", staff, &svcchatv1.ListReportsRequest{}).GetData(); len(left) != 1 || left[0].GetId() != byPage.GetId() {
		t.Fatalf("open reports left = %v", left)
	}
}
