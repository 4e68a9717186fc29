package main

import (
	"testing"

	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
	"github.com/svcplatform/svc/plugins/internal/leavetest"
	"github.com/svcplatform/svc/sdk/plugintest"
)

// A person who leaves takes with them their Page conversations and what
// is in them, their opt-ins, their blocks and their reports.
func TestAPersonWhoLeftHasNoConversationsOptInsBlocksOrReportsLeft(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.userWrites(t, "hello")
	must[*svcchatv1.OptInResponse](t, b, "OptIn", user, &svcchatv1.OptInRequest{PageId: testPage, Purposes: []string{"transactional"}})
	b.reportPage(t, "spam")
	b.blockPage(t, user)

	counts := map[string]string{
		"conversations": `SELECT count(*) FROM svcchat.conversations WHERE user_id = $1`,
		"messages": `SELECT count(*) FROM svcchat.messages m JOIN svcchat.conversations c
		             ON c.page_id = m.page_id AND c.id = m.conversation_id WHERE c.user_id = $1`,
		"opt-ins": `SELECT count(*) FROM svcchat.opt_ins WHERE user_id = $1`,
		"blocks":  `SELECT count(*) FROM svcchat.page_blocks WHERE user_id = $1`,
		"reports": `SELECT count(*) FROM svcchat.reports WHERE reporter_user_id = $1`,
	}
	for what, q := range counts {
		if plugintest.Count(t, b.pool, q, consumer) == 0 {
			t.Fatalf("no %s before leaving", what)
		}
	}
	leavetest.Leave(t, b.tp, consumer)
	leavetest.Leave(t, b.tp, consumer)
	for what, q := range counts {
		if n := plugintest.Count(t, b.pool, q, consumer); n != 0 {
			t.Errorf("%d %s left", n, what)
		}
	}
	if n := plugintest.Count(t, b.pool, `SELECT count(*) FROM svcchat.messages`); n != 0 {
		t.Errorf("%d messages of the person's conversations left", n)
	}
}
