package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"google.golang.org/protobuf/proto"

	completionsv1 "github.com/svcplatform/svc/gen/svc/completions/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/plugins/completions/internal/completionsdb"
	"github.com/svcplatform/svc/sdk"
)

// service holds the plugin's parts; its methods are the handlers.
type service struct {
	router  *router
	usage   *recorder
	quota   *quota
	db      completionsdb.DBTX
	metrics *metrics
	now     func() time.Time
	// inflight counts completions being answered, so that a stopping
	// plugin writes their usage after they end.
	inflight atomic.Int64
}

func (s *service) register(p *sdk.Plugin) {
	methods := completionsv1.File_svc_completions_v1_completions_proto.Services().ByName("CompletionsService").Methods()
	sdk.Handle(p, methods.ByName("ChatCompletion"), s.chatCompletion)
	sdk.HandleStream(p, methods.ByName("StreamChatCompletion"), s.streamChatCompletion)
	sdk.Handle(p, methods.ByName("ListModels"), s.listModels)
	sdk.Handle(p, methods.ByName("Complete"), s.complete)
	sdk.Handle(p, methods.ByName("GetUsage"), s.getUsage)
	sdk.Handle(p, methods.ByName("ExportMetrics"), s.exportMetrics)
	sdk.Handle(p, methods.ByName("GetBudget"), s.getBudget)
	sdk.Handle(p, methods.ByName("SetBudget"), s.setBudget)
	sdk.Handle(p, methods.ByName("ListUpstreams"), s.listUpstreams)
}

// stop writes the usage still in memory once the completions in flight
// have ended (the host cancels them as it stops the plugin), within ctx.
func (s *service) stop(ctx context.Context) {
	for s.inflight.Load() > 0 && ctx.Err() == nil {
		t := time.NewTimer(5 * time.Millisecond)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	if err := s.usage.flush(ctx); err != nil {
		s.usage.log.Error("usage not written at stop", "error", err)
	}
}

// account records one request's usage and charges its tokens to the app's
// budget.
func (s *service) account(app, model, upstream string, u usage) {
	s.usage.record(app, model, upstream, u)
	s.quota.charge(app, u.PromptTokens+u.CompletionTokens)
}

// accountAbort records a request whose client left while an upstream was
// answering: the prompt, estimated, and nothing generated.
func (s *service) accountAbort(app string, req *chatRequest, err error) {
	var cg *clientGone
	if errors.As(err, &cg) {
		s.account(app, req.Model, cg.upstream, usage{PromptTokens: estimatePromptTokens(req.Messages)})
	}
}

// refuse is an OpenAI error answer.
func (s *service) refuse(e *apiError) *pluginv1.HttpResponse {
	s.metrics.refusals.WithLabelValues(strconv.Itoa(e.Status)).Inc()
	return &pluginv1.HttpResponse{Status: int32(e.Status), Body: e.body(), RetryAfterSeconds: int32(e.RetryAfter)}
}

// answerError turns what the router returned into the client's answer.
func (s *service) answerError(call *sdk.Call, err error) (*pluginv1.HttpResponse, error) {
	var ae *apiError
	var pt *passThrough
	switch {
	case errors.As(err, &ae):
		return s.refuse(ae), nil
	case errors.As(err, &pt):
		s.metrics.refusals.WithLabelValues(strconv.Itoa(pt.status)).Inc()
		return &pluginv1.HttpResponse{Status: int32(pt.status), Body: pt.body}, nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return nil, err // the caller is gone or out of time; the SDK says so
	}
	call.Logger().Error("chat completion failed", "error", err)
	return s.refuse(internalError()), nil
}

// chatCompletion answers a request that is not streamed.
func (s *service) chatCompletion(ctx context.Context, call *sdk.Call, in *pluginv1.HttpRequest) (*pluginv1.HttpResponse, error) {
	req, e := parseRequest(in.GetBody())
	if e != nil {
		return s.refuse(e), nil
	}
	if req.Stream {
		return s.refuse(invalid("stream", "invalid_value", "This method does not stream; call StreamChatCompletion.")), nil
	}
	s.inflight.Add(1)
	defer s.inflight.Add(-1)
	app := call.Principal().AppID
	if req.Model != builtinModel && !s.router.serves(req.Model) {
		return s.refuse(modelNotFound(req.Model)), nil
	}
	if e := s.quota.admit(ctx, app); e != nil {
		return s.refuse(e), nil
	}
	if req.Model == builtinModel {
		body, u := s.builtinCompletion(req)
		s.account(app, builtinModel, builtinModel, u)
		return &pluginv1.HttpResponse{Status: http.StatusOK, Body: body}, nil
	}
	body, u, upstream, wait, err := s.router.complete(ctx, req)
	if err != nil {
		s.accountAbort(app, req, err)
		r, herr := s.answerError(call, err)
		if r != nil {
			r.UpstreamNanos = wait.Nanoseconds()
		}
		return r, herr
	}
	s.account(app, req.Model, upstream, u)
	return &pluginv1.HttpResponse{Status: http.StatusOK, Body: body, UpstreamNanos: wait.Nanoseconds()}, nil
}

// streamChatCompletion answers a streamed request (see svc.plugin.v1.HttpStreamPart).
func (s *service) streamChatCompletion(ctx context.Context, call *sdk.Call, in *pluginv1.HttpRequest, send func(*pluginv1.HttpStreamPart) error) error {
	refuse := func(e *apiError) error { return send(refusalPart(s.refuse(e))) }
	req, e := parseRequest(in.GetBody())
	if e != nil {
		return refuse(e)
	}
	if !req.Stream {
		return refuse(invalid("stream", "invalid_value", "This method streams; call ChatCompletion for 'stream': false."))
	}
	s.inflight.Add(1)
	defer s.inflight.Add(-1)
	app := call.Principal().AppID
	if req.Model != builtinModel && !s.router.serves(req.Model) {
		return refuse(modelNotFound(req.Model))
	}
	if e := s.quota.admit(ctx, app); e != nil {
		return refuse(e)
	}
	started := false
	var wait time.Duration
	part := &pluginv1.HttpStreamPart{}
	var batch []byte
	emit := func(data []byte, more bool) error {
		// Events at hand together go in one part, framed, so that the edge
		// writes and flushes them once.
		batch = append(batch, "data: "...)
		batch = append(batch, data...)
		batch = append(batch, '\n', '\n')
		if more && len(batch) < 64<<10 {
			return nil
		}
		part.Events = batch
		if !started {
			part.Status, part.UpstreamNanos, started = http.StatusOK, wait.Nanoseconds(), true
		}
		err := send(part) // marshals part before returning: both may be reused
		part.Status, part.UpstreamNanos, batch = 0, 0, batch[:0]
		return err
	}
	if req.Model == builtinModel {
		u, err := s.builtinStream(req, emit)
		s.account(app, builtinModel, builtinModel, u)
		return err
	}
	res, err := s.router.stream(ctx, req, emit, func(d time.Duration) { wait = d })
	if res.upstream != "" {
		s.account(app, req.Model, res.upstream, res.usage)
	} else {
		s.accountAbort(app, req, err)
	}
	if err != nil && !started {
		r, herr := s.answerError(call, err)
		if herr != nil {
			return herr
		}
		return send(refusalPart(r))
	}
	return err
}

// refusalPart is a refusal as a stream's only part: the edge answers it as
// plain JSON with its status.
func refusalPart(r *pluginv1.HttpResponse) *pluginv1.HttpStreamPart {
	return &pluginv1.HttpStreamPart{Status: r.Status, Data: r.Body, RetryAfterSeconds: r.RetryAfterSeconds}
}

// builtinCompletion is svc-builtin's chat.completion: its text, or a call
// of req.tool.
func (s *service) builtinCompletion(req *chatRequest) ([]byte, usage) {
	text, finish, pieces := builtinAnswer(req.MaxTokens)
	tokens := len(pieces)
	if req.tool != "" {
		finish, tokens = "tool_calls", countTokens(req.tool)+countTokens(builtinArguments)
	}
	c := completion{ID: newID(), Object: "chat.completion", Created: s.now().Unix(), Model: builtinModel}
	for i := range req.N {
		m := assistantMessage{Role: "assistant", Content: &text}
		if req.tool != "" {
			m.Content = nil
			m.ToolCalls = []toolCall{{ID: newCallID(), Type: "function", Function: toolFunction{Name: req.tool, Arguments: builtinArguments}}}
		}
		c.Choices = append(c.Choices, choice{Index: i, Message: m, FinishReason: finish})
	}
	c.Usage = usage{PromptTokens: promptTokens(req.Messages), CompletionTokens: req.N * tokens}
	c.Usage.TotalTokens = c.Usage.PromptTokens + c.Usage.CompletionTokens
	b, _ := json.Marshal(c)
	return b, c.Usage
}

// builtinStream streams svc-builtin's reply one token per chunk, or its
// call of req.tool as OpenAI streams one: the call's id and name first,
// then its arguments, then finish_reason "tool_calls".
func (s *service) builtinStream(req *chatRequest, emit emitFunc) (usage, error) {
	_, finish, pieces := builtinAnswer(req.MaxTokens)
	u := usage{PromptTokens: promptTokens(req.Messages)}
	base := chunk{ID: newID(), Object: "chat.completion.chunk", Created: s.now().Unix(), Model: builtinModel}
	send := func(choices []chunkChoice, us *usage) error {
		c := base
		c.Choices, c.Usage = choices, us
		b, _ := json.Marshal(c)
		return emit(b, true) // all at hand; [DONE] sends them
	}
	for i := range req.N {
		empty := ""
		if req.tool != "" {
			first := 0
			call := toolCall{Index: &first, ID: newCallID(), Type: "function", Function: toolFunction{Name: req.tool}}
			args := toolCall{Index: &first, Function: toolFunction{Arguments: builtinArguments}}
			done := "tool_calls"
			for _, d := range []delta{{Role: "assistant", ToolCalls: []toolCall{call}}, {ToolCalls: []toolCall{args}}} {
				if err := send([]chunkChoice{{Index: i, Delta: d}}, nil); err != nil {
					return u, err
				}
			}
			if err := send([]chunkChoice{{Index: i, FinishReason: &done}}, nil); err != nil {
				return u, err
			}
			u.CompletionTokens += countTokens(req.tool) + countTokens(builtinArguments)
			continue
		}
		if err := send([]chunkChoice{{Index: i, Delta: delta{Role: "assistant", Content: &empty}}}, nil); err != nil {
			return u, err
		}
		for _, p := range pieces {
			p := p
			if err := send([]chunkChoice{{Index: i, Delta: delta{Content: &p}}}, nil); err != nil {
				return u, err
			}
			u.CompletionTokens++
		}
		if err := send([]chunkChoice{{Index: i, FinishReason: &finish}}, nil); err != nil {
			return u, err
		}
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	if req.IncludeUsage {
		if err := send([]chunkChoice{}, &u); err != nil {
			return u, err
		}
	}
	return u, emit(doneEvent, false)
}

// listModels answers GET /v1/models.
func (s *service) listModels(context.Context, *sdk.Call, *pluginv1.HttpRequest) (*pluginv1.HttpResponse, error) {
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list"}
	list.Data = append(list.Data, model{ID: builtinModel, Object: "model", Created: builtinCreated, OwnedBy: "svc"})
	for _, m := range s.router.models {
		owner := s.router.byModel[m][0].name
		list.Data = append(list.Data, model{ID: m, Object: "model", Created: builtinCreated, OwnedBy: owner})
	}
	b, _ := json.Marshal(list)
	return &pluginv1.HttpResponse{Status: http.StatusOK, Body: b}, nil
}

// builtinCreated is the "created" time of listed models: the day this
// plugin first shipped (upstream models' own dates are not known).
var builtinCreated = time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC).Unix()

// complete is the typed method other plugins call: one reply, routed like
// ChatCompletion, refusals as Graph errors.
func (s *service) complete(ctx context.Context, call *sdk.Call, in *completionsv1.CompleteRequest) (*completionsv1.CompleteResponse, error) {
	model := in.GetModel()
	if model == "" {
		model = s.router.defaultModel()
	}
	msgs := make([]message, len(in.GetMessages()))
	for i, m := range in.GetMessages() {
		msgs[i] = message{Role: m.GetRole(), Content: m.GetContent()}
	}
	body := map[string]any{"model": model, "messages": msgs}
	if in.GetMaxTokens() > 0 {
		body["max_tokens"] = in.GetMaxTokens()
	}
	raw, _ := json.Marshal(body)
	out, err := s.chatCompletion(ctx, call, &pluginv1.HttpRequest{Body: raw})
	if err != nil {
		return nil, err
	}
	if out.GetStatus() != http.StatusOK {
		return nil, graphError(out)
	}
	var c struct {
		Model   string `json:"model"`
		Choices []struct {
			Message      message `json:"message"`
			FinishReason string  `json:"finish_reason"`
		} `json:"choices"`
		Usage usage `json:"usage"`
	}
	if err := json.Unmarshal(out.GetBody(), &c); err != nil || len(c.Choices) == 0 {
		return nil, sdk.Unavailable("The model " + model).WithCause(fmt.Errorf("unreadable completion: %v", err))
	}
	return &completionsv1.CompleteResponse{
		Content: c.Choices[0].Message.Content, Model: model, FinishReason: c.Choices[0].FinishReason,
		PromptTokens: int32(c.Usage.PromptTokens), CompletionTokens: int32(c.Usage.CompletionTokens),
	}, nil
}

// graphError turns an OpenAI refusal into the Graph error a calling plugin
// understands (CONTRACT §3).
func graphError(out *pluginv1.HttpResponse) error {
	var e struct {
		Error apiError `json:"error"`
	}
	_ = json.Unmarshal(out.GetBody(), &e)
	msg := e.Error.Message
	switch out.GetStatus() {
	case http.StatusBadRequest:
		param := ""
		if e.Error.Param != nil {
			param = *e.Error.Param
		}
		return sdk.Invalid(param, "%s", msg)
	case http.StatusNotFound:
		return &sdk.Error{HTTPStatus: http.StatusNotFound, Code: 100, Subcode: 33, Type: sdk.TypeGraphMethod, Field: "model", Message: msg}
	case http.StatusTooManyRequests:
		return &sdk.Error{HTTPStatus: http.StatusTooManyRequests, Code: 4, Type: sdk.TypeRateLimit, Transient: true, Message: msg}
	case http.StatusServiceUnavailable, http.StatusBadGateway:
		return &sdk.Error{HTTPStatus: http.StatusServiceUnavailable, Code: 2, Type: sdk.TypeUnavailable, Transient: true, Message: msg}
	}
	return sdk.Internal(fmt.Errorf("completion answered %d: %s", out.GetStatus(), msg))
}

// getUsage reads app/{app_id}/completions_usage.
// The gateway has checked the caller's standing on the app (app_role
// MEMBER).
func (s *service) getUsage(ctx context.Context, _ *sdk.Call, in *completionsv1.GetUsageRequest) (*completionsv1.GetUsageResponse, error) {
	today := s.now().UTC().Truncate(24 * time.Hour)
	until, err := parseDay("until", in.GetUntil(), today)
	if err != nil {
		return nil, err
	}
	since, err := parseDay("since", in.GetSince(), until.AddDate(0, 0, -29))
	if err != nil {
		return nil, err
	}
	if since.After(until) {
		return nil, sdk.Invalid("since", "Invalid parameter: since must not be after until.")
	}
	// Read your own writes: what this process counted goes in first.
	if err := s.usage.flush(ctx); err != nil {
		return nil, err
	}
	rows, err := completionsdb.New(s.db).UsageByDay(ctx, completionsdb.UsageByDayParams{
		AppID: in.GetAppId(), Since: pgtype.Date{Time: since, Valid: true}, Until: pgtype.Date{Time: until, Valid: true},
	})
	if err != nil {
		return nil, err
	}
	res := &completionsv1.GetUsageResponse{Data: make([]*completionsv1.Usage, len(rows))}
	for i, r := range rows {
		res.Data[i] = &completionsv1.Usage{
			Model: r.Model, Day: r.Day.Time.Format(time.DateOnly),
			Requests: float64(r.Requests), PromptTokens: float64(r.PromptTokens), CompletionTokens: float64(r.CompletionTokens),
			TotalTokens: float64(r.PromptTokens + r.CompletionTokens),
		}
	}
	return res, nil
}

// parseDay reads a since/until value: a date, an RFC 3339 time or Unix
// seconds, as the UTC day it falls on.
func parseDay(field, v string, def time.Time) (time.Time, error) {
	if v == "" {
		return def, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t.UTC().Truncate(24 * time.Hour), nil
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil && secs >= 0 && secs < 1<<40 {
		return time.Unix(secs, 0).UTC().Truncate(24 * time.Hour), nil
	}
	return time.Time{}, sdk.Invalid(field, "Invalid parameter: %s must be a date (2026-11-23), an RFC 3339 time or Unix seconds.", field)
}

// exportMetrics hands the gateway this process's Prometheus metrics.
func (s *service) exportMetrics(context.Context, *sdk.Call, *pluginv1.MetricsRequest) (*pluginv1.MetricsResponse, error) {
	families, err := s.metrics.registry.Gather()
	if err != nil {
		return nil, err
	}
	res := &pluginv1.MetricsResponse{}
	for _, f := range families {
		b, err := proto.Marshal(f)
		if err != nil {
			return nil, err
		}
		res.Families = append(res.Families, b)
	}
	return res, nil
}

// newID is a completion id, "chatcmpl-" and 24 random characters.
func newID() string {
	return "chatcmpl-" + strings.ReplaceAll(rand.Text(), "=", "")[:24]
}

// newCallID is a tool call's id, "call_" and 24 random characters, as
// OpenAI's; a tool message quotes it back in tool_call_id.
func newCallID() string {
	return "call_" + strings.ReplaceAll(rand.Text(), "=", "")[:24]
}
