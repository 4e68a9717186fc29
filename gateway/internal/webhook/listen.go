package webhook

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/sdk"
)

// Listeners: `gateway listen` (docs/WEBHOOKS.md, "Webhooks on a laptop").
//
// A listener is a developer's machine holding an outbound stream to a
// gateway, GET ListenPath?app_id=… (Server-Sent Events). While an app has
// one, its deliveries go to the listener instead of its endpoint: the
// worker that attempts a delivery signs it exactly as for the endpoint,
// pushes body and headers down the stream, and waits for the listener's
// acknowledgement (POST ListenAckPath) carrying the local receiver's
// status. That is the attempt: logged (via "listener") and recorded like
// any other, 2xx succeeds, anything else, no acknowledgement within the
// attempt timeout, or the stream closing first, fails it and it is retried
// on the schedule, to the listener if one is connected by then, else to
// the endpoint. A listener started with a list of event types takes only
// those; the app's other deliveries still go to its endpoint. A listener
// that (re)connects makes the app's deliveries waiting for a retry due at
// once. A listener's failures never count toward disabling the endpoint.
//
// Bounds: MaxListeners per app; listenQueue deliveries waiting per stream
// (a worker waits for room within its attempt timeout); one pending
// acknowledgement per attempt in flight, so at most Workers in all; a
// stream idle for listenIdle is closed (the listener reconnects).
//
// core.webhook_listeners says which apps listen, so that the dispatcher
// makes their deliveries even without a subscription (of the event types
// the listener asked for, or all it is entitled to). A delivery is pushed
// only by the gateway holding the stream: a gateway without it sends the
// delivery to the endpoint, or, when the app has no subscription but a
// listener elsewhere, fails the attempt so that it comes again.
const (
	ListenPath    = "/api/webhooks/listen"
	ListenAckPath = "/api/webhooks/listen/ack"
	// MaxListeners is how many listeners one app may have at once, over
	// every gateway; more are refused (429).
	MaxListeners = 3
	// listenerTTL is how long a listener's row counts without renewal;
	// the stream renews it every listenerRenew.
	listenerTTL   = 2 * time.Minute
	listenerRenew = 30 * time.Second
	// listenerGrace is how long a listener that went away still counts, so
	// that what it left unacknowledged waits for it to reconnect.
	listenerGrace = time.Minute
	// listenPing keeps the stream (and proxies on its way) alive.
	listenPing = 15 * time.Second
	// listenIdle closes a stream that carried no delivery for this long;
	// the listener reconnects.
	listenIdle = 30 * time.Minute
	// listenQueue bounds the deliveries waiting to be written to one
	// stream; a worker waits (within its attempt timeout) for room.
	listenQueue = 16
)

// ListenDelivery is one delivery as a listener receives it: the request a
// real endpoint would get, byte for byte.
type ListenDelivery struct {
	// Token names this attempt in the acknowledgement.
	Token      string `json:"token"`
	DeliveryID string `json:"delivery_id"`
	EventID    string `json:"event_id"`
	EventType  string `json:"event_type"`
	// Headers are the request's headers (signatures included).
	Headers map[string]string `json:"headers"`
	// Body is the raw JSON body, as a string.
	Body string `json:"body"`
}

// ListenAck is a listener's acknowledgement of one delivery.
type ListenAck struct {
	ListenerID string `json:"listener_id"`
	Token      string `json:"token"`
	// StatusCode is what the local receiver answered; 0 when it did not.
	StatusCode int `json:"status_code"`
	// Error says why there was no answer.
	Error string `json:"error"`
	// ResponseExcerpt is the start of the local answer.
	ResponseExcerpt string `json:"response_excerpt"`
}

// ListenReady is the first message of a stream.
type ListenReady struct {
	ListenerID string `json:"listener_id"`
	AppID      string `json:"app_id"`
}

// listener is one open stream.
type listener struct {
	id  string
	app int64
	// events are the event types it takes; empty: all.
	events []string
	out    chan ListenDelivery
	done   chan struct{}

	mu      sync.Mutex
	waiting map[string]chan ListenAck
}

func (l *listener) expect(token string) chan ListenAck {
	ch := make(chan ListenAck, 1)
	l.mu.Lock()
	l.waiting[token] = ch
	l.mu.Unlock()
	return ch
}

func (l *listener) forget(token string) {
	l.mu.Lock()
	delete(l.waiting, token)
	l.mu.Unlock()
}

// ack hands an acknowledgement to the attempt waiting for it; false when
// none waits (unknown token, or the attempt gave up).
func (l *listener) ack(a ListenAck) bool {
	l.mu.Lock()
	ch, ok := l.waiting[a.Token]
	delete(l.waiting, a.Token)
	l.mu.Unlock()
	if ok {
		ch <- a
	}
	return ok
}

// listenHub holds this gateway's open streams.
type listenHub struct {
	mu    sync.Mutex
	byApp map[int64][]*listener
	byID  map[string]*listener
	turn  map[int64]int
}

func (h *listenHub) add(l *listener) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byApp == nil {
		h.byApp, h.byID, h.turn = map[int64][]*listener{}, map[string]*listener{}, map[int64]int{}
	}
	h.byApp[l.app] = append(h.byApp[l.app], l)
	h.byID[l.id] = l
}

func (h *listenHub) remove(l *listener) {
	h.mu.Lock()
	defer h.mu.Unlock()
	list := h.byApp[l.app]
	for i, x := range list {
		if x == l {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(h.byApp, l.app)
		delete(h.turn, l.app)
	} else {
		h.byApp[l.app] = list
	}
	delete(h.byID, l.id)
}

// pick returns one of the app's listeners here that takes events of type
// eventType, in turn, or nil.
func (h *listenHub) pick(app int64, eventType string) *listener {
	h.mu.Lock()
	defer h.mu.Unlock()
	list := h.byApp[app]
	if len(list) == 0 {
		return nil
	}
	h.turn[app]++
	for i := range list {
		l := list[(h.turn[app]+i)%len(list)]
		if len(l.events) == 0 || slices.Contains(l.events, eventType) {
			return l
		}
	}
	return nil
}

func (h *listenHub) get(id string) *listener {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.byID[id]
}

// attemptListener sends one delivery to a listener and waits for its
// acknowledgement.
func (s *Service) attemptListener(ctx context.Context, j *job, l *listener, now time.Time) result {
	d := j.d
	fail := func(format string, args ...any) result {
		return result{job: j, outcome: failed, viaListener: true,
			attempt: &attemptLog{at: now, latency: time.Since(now), via: viaListener, err: fmt.Sprintf(format, args...)}}
	}
	body, header, err := s.signed(ctx, d, now)
	if err != nil {
		return fail("not sent: %v", err)
	}
	msg := ListenDelivery{Token: rand.Text(), DeliveryID: d.ID, EventID: d.EventID, EventType: d.EventType,
		Headers: make(map[string]string, len(header)), Body: string(body)}
	for k, v := range header {
		msg.Headers[k] = strings.Join(v, ", ")
	}
	wait := l.expect(msg.Token)
	defer l.forget(msg.Token)
	actx, cancel := context.WithTimeout(ctx, s.opts.AttemptTimeout)
	defer cancel()
	timeout := func() result {
		if ctx.Err() != nil {
			return result{job: j, outcome: interrupted, viaListener: true, attempt: &attemptLog{at: now, latency: time.Since(now), via: viaListener,
				err: "interrupted: the gateway stopped before the listener acknowledged; it will be sent again"}}
		}
		return fail("timeout: the listener (gateway listen) did not acknowledge within %s", s.opts.AttemptTimeout)
	}
	select {
	case l.out <- msg:
	case <-l.done:
		return fail("the listener (gateway listen) disconnected before the delivery was sent")
	case <-actx.Done():
		return timeout()
	}
	var a ListenAck
	select {
	case a = <-wait:
	case <-l.done:
		return fail("the listener (gateway listen) disconnected before acknowledging")
	case <-actx.Done():
		return timeout()
	}
	log := &attemptLog{at: now, latency: time.Since(now), via: viaListener, statusCode: a.StatusCode,
		excerpt: cleanText([]byte(a.ResponseExcerpt))}
	switch {
	case a.StatusCode >= 200 && a.StatusCode <= 299:
		return result{job: j, outcome: succeeded, viaListener: true, attempt: log}
	case a.StatusCode == 0:
		log.err = "the listener's local receiver did not answer: " + cleanText([]byte(a.Error))
	default:
		log.err = fmt.Sprintf("the listener's local receiver answered HTTP %d, not 2xx", a.StatusCode)
	}
	return result{job: j, outcome: failed, viaListener: true, attempt: log}
}

// ListenAuth authenticates a listener's request and decides whether its
// caller may listen to (or acknowledge for) the app: the gateway backs it
// with auth (the app's key or token, or a team member's token with the
// Developer role at least). It returns the refusal to answer, or nil.
type ListenAuth func(r *http.Request, appID string) error

// ListenHandler serves ListenPath and ListenAckPath until ctx ends. write
// answers an error as the gateway does.
func (s *Service) ListenHandler(ctx context.Context, authorize ListenAuth, write func(http.ResponseWriter, *http.Request, error)) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+ListenPath, func(w http.ResponseWriter, r *http.Request) {
		// Authentication first, before any parameter is looked at.
		appID := r.URL.Query().Get("app_id")
		if err := authorize(r, appID); err != nil {
			write(w, r, err)
			return
		}
		if err := s.listen(ctx, w, r, appID); err != nil {
			write(w, r, err)
		}
	})
	mux.HandleFunc("POST "+ListenAckPath, func(w http.ResponseWriter, r *http.Request) {
		appID := r.URL.Query().Get("app_id")
		if err := authorize(r, appID); err != nil {
			write(w, r, err)
			return
		}
		var a ListenAck
		if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&a); err != nil {
			write(w, r, sdk.Invalid("body", "Invalid parameter: the acknowledgement is not a JSON object: %v.", err))
			return
		}
		l := s.listeners.get(a.ListenerID)
		if l == nil || sdk.FormatID(l.app) != appID || !l.ack(a) {
			write(w, r, sdk.NotFound("Delivery awaiting acknowledgement "+a.Token))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"success":true}`)
	})
	return mux
}

// listen serves one stream. It returns an error only before the stream
// started.
func (s *Service) listen(ctx context.Context, w http.ResponseWriter, r *http.Request, appID string) error {
	app, err := s.app(r.Context(), appID)
	if err != nil {
		return err
	}
	var events []string
	if v := r.URL.Query().Get("events"); v != "" {
		if events, err = s.eventList(strings.Split(v, ",")); err != nil {
			return err
		}
	}
	rc := http.NewResponseController(w)
	l := &listener{id: "lsn_" + rand.Text(), app: app.ID, events: events, out: make(chan ListenDelivery, listenQueue),
		done: make(chan struct{}), waiting: map[string]chan ListenAck{}}
	if events == nil {
		events = []string{}
	}
	added, err := s.q.AddWebhookListener(r.Context(), coredb.AddWebhookListenerParams{AppID: app.ID, ID: l.id, Events: events,
		TtlMs: listenerTTL.Milliseconds(), MaxListeners: MaxListeners})
	if err != nil {
		return fmt.Errorf("add a listener of app %d: %w", app.ID, err)
	}
	if !added {
		return &sdk.Error{HTTPStatus: http.StatusTooManyRequests, Code: 4, Type: sdk.TypeRateLimit, Transient: true,
			Message: fmt.Sprintf("App %s already has %d listeners connected; stop one first.", appID, MaxListeners)}
	}
	s.listeners.add(l)
	defer func() {
		s.listeners.remove(l)
		close(l.done)
		ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := s.q.EndWebhookListener(ectx, coredb.EndWebhookListenerParams{ID: l.id, GraceMs: listenerGrace.Milliseconds()}); err != nil {
			s.log.WarnContext(ectx, "cannot end a webhook listener", "app_id", app.ID, "error", err)
		}
		s.log.InfoContext(ectx, "webhook listener disconnected", "app_id", app.ID, "listener_id", l.id)
	}()
	s.log.InfoContext(r.Context(), "webhook listener connected", "app_id", app.ID, "listener_id", l.id, "events", events)

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(event string, v any) error {
		b, _ := json.Marshal(v)
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return err
		}
		return rc.Flush()
	}
	if err := send("ready", ListenReady{ListenerID: l.id, AppID: appID}); err != nil {
		return nil
	}
	// What waited for a retry comes now.
	if n, err := s.q.WakeWebhookDeliveries(r.Context(), app.ID); err != nil {
		s.log.WarnContext(r.Context(), "cannot make a listener's deliveries due", "app_id", app.ID, "error", err)
	} else if n > 0 {
		s.notify()
	}

	ping, renew := time.NewTicker(listenPing), time.NewTicker(listenerRenew)
	defer ping.Stop()
	defer renew.Stop()
	idle := time.NewTimer(listenIdle)
	defer idle.Stop()
	for {
		select {
		case <-ctx.Done():
			_ = send("close", map[string]string{"reason": "the gateway is stopping"})
			return nil
		case <-r.Context().Done():
			return nil
		case <-idle.C:
			_ = send("close", map[string]string{"reason": "idle"})
			return nil
		case <-ping.C:
			if _, err := io.WriteString(w, ": ping\n\n"); err != nil || rc.Flush() != nil {
				return nil
			}
		case <-renew.C:
			if err := s.q.RenewWebhookListener(r.Context(), coredb.RenewWebhookListenerParams{ID: l.id, TtlMs: listenerTTL.Milliseconds()}); err != nil {
				s.log.WarnContext(r.Context(), "cannot renew a webhook listener", "app_id", app.ID, "error", err)
			}
		case msg := <-l.out:
			if err := send("delivery", msg); err != nil {
				return nil
			}
			idle.Reset(listenIdle)
		}
	}
}

// appListening reports whether the app has a listener on any gateway.
func (s *Service) appListening(ctx context.Context, app int64) bool {
	ok, err := s.q.WebhookAppListening(ctx, app)
	if err != nil {
		s.log.WarnContext(ctx, "cannot tell whether an app listens", "app_id", app, "error", err)
	}
	return ok
}
