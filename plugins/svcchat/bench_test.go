package main

import (
	"context"
	"syscall"
	"testing"
	"time"

	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
	"github.com/svcplatform/svc/plugins/svcchat/internal/svcchatdb"
	"github.com/svcplatform/svc/sdk/plugintest"
)

// BenchmarkSendMessage measures an app's text message to a user in an
// open conversation, as the plugin serves it through the test kit: the
// Page's facts from the host, one round trip after the first send (BEGIN,
// the locks, the guarded message and its events, COMMIT: sendcache.go)
// against a real PostgreSQL.
//
//	go test -run '^$' -bench SendMessage -benchmem ./plugins/svcchat/
func BenchmarkSendMessage(b *testing.B) {
	bd := setup(b)
	ctx := context.Background()
	if _, err := plugintest.Call[*svcchatv1.WriteToPageResponse](ctx, bd.tp, "/svc.svcchat.v1.SvcchatService/WriteToPage", user,
		&svcchatv1.WriteToPageRequest{PageId: testPage, Text: "hello"}); err != nil {
		b.Fatal(err)
	}
	req := &svcchatv1.SendMessageRequest{PageId: testPage, RecipientUserId: strp(consumer), Text: strp("Benchmark reply: ☕ 咖啡 🚀")}
	b.ReportAllocs()
	start := processCPU()
	for b.Loop() {
		if _, err := plugintest.Call[*svcchatv1.SendMessageResponse](ctx, bd.tp, "/svc.svcchat.v1.SvcchatService/SendMessage", devSend, req); err != nil {
			b.Fatal(err)
		}
	}
	// The process's CPU (plugin and test kit, not PostgreSQL) per send:
	// steadier than ns/op on a shared machine.
	b.ReportMetric(float64((processCPU()-start).Microseconds())/float64(b.N), "cpu-µs/op")
}

// processCPU is the CPU time this process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkMessagePost measures what a send of the Page other than an
// app's (a manager's, the assistant's) builds before its statement: the
// message and the outbox rows of the events announcing it (ids, types,
// data), with no database. An app's send has PostMessageIf build them.
//
//	go test -run '^$' -bench MessagePost -benchmem ./plugins/svcchat/
func BenchmarkMessagePost(b *testing.B) {
	conv := &svcchatdb.SvcchatConversation{PageID: testPage, ID: 1000000001, UserID: consumer}
	m := newMessage{Direction: "outbound", Sender: "page", AppID: devApp, Kind: "text", Text: "Benchmark reply: ☕ 咖啡 🚀"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := messagePost(conv, m, sentEvents(conv)); err != nil {
			b.Fatal(err)
		}
	}
}
