package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	completionsv1 "github.com/svcplatform/svc/gen/svc/completions/v1"
	"github.com/svcplatform/svc/plugins/svcchat/internal/svcchatdb"
	"github.com/svcplatform/svc/sdk"
)

// completeProcedure is the completions plugin's typed completion, which
// accepts a plugin acting as itself.
const completeProcedure = "/svc.completions.v1.CompletionsService/Complete"

// builtinModel is the completions plugin's built-in model, which answers
// Complete when the server has no language model configured. Its reply
// speaks of the platform's models, which is no business of the Page's
// customers: the assistant sends the Page's own fallback instead.
const builtinModel = "svc-builtin"

// errNoModel: no language model is configured on the server.
var errNoModel = errors.New("no language model is configured")

// assistant sends the built-in assistant's first reply to conversations,
// off the request path. Jobs are rows of svcchat.assistant_jobs written
// with the user's message; every svcchat process (one per gateway) runs an
// assistant, and FOR UPDATE SKIP LOCKED gives each job to one of them at a
// time. The claiming transaction stays open while the model answers and
// commits the reply with the job's end, so a reply is sent exactly once: a
// process that dies mid-job leaves the job pending for the next claim.
type assistant struct {
	pool *pgxpool.Pool
	host func() *sdk.HostClient
	log  *slog.Logger
	// wake is nudged when this process enqueues a job; poll finds the jobs
	// of other processes and retries that fell due.
	wake chan struct{}
	poll time.Duration
	// attempts is how many times the model is asked before the built-in
	// reply is sent; backoff(n) is the wait after the n-th failure.
	attempts int
	backoff  func(n int32) time.Duration
	// timeout bounds one model call.
	timeout time.Duration
}

func newAssistant(pool *pgxpool.Pool, host func() *sdk.HostClient, log *slog.Logger) *assistant {
	return &assistant{pool: pool, host: host, log: log, wake: make(chan struct{}, 1), poll: time.Second,
		attempts: 3, timeout: 30 * time.Second,
		backoff: func(n int32) time.Duration { return time.Duration(1<<(2*(n-1))) * time.Second }} // 1 s, 4 s, 16 s…
}

// nudge tells the worker a job is waiting, without blocking.
func (a *assistant) nudge() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// run works through due jobs until ctx ends.
func (a *assistant) run(ctx context.Context) {
	for {
		for ctx.Err() == nil {
			worked, err := a.runOne(ctx)
			if err != nil && ctx.Err() == nil {
				a.log.Warn("assistant job failed; it stays pending", "error", err)
			}
			if !worked || err != nil {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-a.wake:
		case <-time.After(a.poll):
		}
	}
}

// runOne claims one due job and finishes it or schedules its retry; false
// when no job was due (or the gateway is not reachable yet).
func (a *assistant) runOne(ctx context.Context) (bool, error) {
	tx, err := a.pool.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	q := svcchatdb.New(tx)
	job, err := q.ClaimAssistantJob(ctx)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	page, err := a.host().PageAccess(ctx, sdk.PageQuery{PageID: job.PageID})
	if errors.Is(err, sdk.ErrNoHost) {
		return false, nil // not described by a gateway yet; the job waits
	}
	if err != nil {
		return false, err
	}
	conv, err := q.GetConversation(ctx, svcchatdb.GetConversationParams{PageID: job.PageID, ID: job.ConversationID})
	if err != nil {
		return false, err
	}
	finish := func(msgID, source string) (bool, error) {
		if err := q.FinishAssistantJob(ctx, svcchatdb.FinishAssistantJobParams{PageID: job.PageID, ConversationID: job.ConversationID,
			MessageID: msgID, Source: source}); err != nil {
			return false, err
		}
		return true, tx.Commit(ctx)
	}
	if speak, err := a.shouldSpeak(ctx, q, conv.SvcchatConversation, page); err != nil || !speak {
		if err != nil {
			return false, err
		}
		return finish("", "silent")
	}
	source := "model"
	text, err := a.compose(ctx, q, job, page)
	switch {
	case errors.Is(err, errNoModel):
		// The interface: the first reply "uses an external language model
		// when one is configured on the server"; without one it is the
		// Page's fallback, attributed as every assistant reply. Asking
		// again would not change that.
		text, source = builtinReply(page), "builtin"
	case err != nil:
		if job.Attempts+1 < int32(a.attempts) {
			a.log.Warn("the model did not answer the assistant; retrying", "conversation", job.ConversationID, "attempt", job.Attempts+1, "error", err)
			if err := q.RetryAssistantJob(ctx, svcchatdb.RetryAssistantJobParams{PageID: job.PageID, ConversationID: job.ConversationID,
				DelaySeconds: a.backoff(job.Attempts + 1).Seconds(), LastError: err.Error()}); err != nil {
				return false, err
			}
			return true, tx.Commit(ctx)
		}
		a.log.Warn("the model did not answer the assistant; sending the built-in reply", "conversation", job.ConversationID, "error", err)
		text, source = builtinReply(page), "builtin"
	}
	// The holder may have changed while the model wrote: decide under the
	// conversation's lock.
	locked, err := q.LockConversation(ctx, svcchatdb.LockConversationParams{PageID: job.PageID, ID: job.ConversationID})
	if err != nil {
		return false, err
	}
	if speak, err := a.shouldSpeak(ctx, q, locked, page); err != nil || !speak {
		if err != nil {
			return false, err
		}
		return finish("", "silent")
	}
	msg, err := postMessage(ctx, q, &locked, newMessage{
		Direction: "outbound", Sender: string(HolderAssistant), Kind: "session", Text: text,
	}, sentEvents(&locked))
	if err != nil {
		return false, err
	}
	return finish(msg.ID, source)
}

// shouldSpeak: the assistant answers only while it holds control of a
// conversation on a Page that still has inbox automation on and shows
// its threads, that staff have not restricted and that the user has not
// blocked (a send of the Page like any other, CONTRACT §16).
func (a *assistant) shouldSpeak(ctx context.Context, q *svcchatdb.Queries, c svcchatdb.SvcchatConversation, page *sdk.PageAccess) (bool, error) {
	if Holder(c.Holder) != HolderAssistant || !page.Exists || !page.InboxAutomation || !page.Published || !page.ChatSurfacing {
		return false, nil
	}
	b, err := q.SendBarrier(ctx, svcchatdb.SendBarrierParams{PageID: c.PageID, UserID: c.UserID})
	if err != nil {
		return false, err
	}
	return sendRefusal(b) == nil, nil
}

// compose asks the completions plugin, as this plugin, for the reply to
// what the user has written so far.
func (a *assistant) compose(ctx context.Context, q *svcchatdb.Queries, job svcchatdb.SvcchatAssistantJob, page *sdk.PageAccess) (string, error) {
	texts, err := q.ListInboundTexts(ctx, svcchatdb.ListInboundTextsParams{PageID: job.PageID, ConversationID: job.ConversationID, Lim: 20})
	if err != nil {
		return "", err
	}
	req := &completionsv1.CompleteRequest{MaxTokens: 300, Messages: []*completionsv1.ChatMessage{{Role: "system", Content: fmt.Sprintf(
		"You are the assistant of %q, answering a customer who wrote to it in a chat app. Reply briefly and kindly in the customer's language. "+
			"If you cannot help, say that a person from %s will follow up.", page.Name, page.Name)}}}
	for _, t := range texts {
		req.Messages = append(req.Messages, &completionsv1.ChatMessage{Role: "user", Content: t})
	}
	cctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	var res completionsv1.CompleteResponse
	if err := a.host().Call(cctx, completeProcedure, req, &res); err != nil {
		return "", err
	}
	if res.GetModel() == builtinModel {
		return "", errNoModel
	}
	text := strings.TrimSpace(res.GetContent())
	if text == "" {
		return "", errors.New("the model answered nothing")
	}
	if r := []rune(text); len(r) > maxMessageText {
		text = string(r[:maxMessageText]) // a message's limit
	}
	return text, nil
}

// builtinReply is what the assistant says when no model is configured or
// none answers: the Page's own words, nothing about the platform.
func builtinReply(page *sdk.PageAccess) string {
	return "Thanks for your message! Someone from " + page.Name + " will get back to you soon."
}
