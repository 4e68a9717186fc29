package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/svcplatform/svc/gateway/internal/coredb"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	webhookv1 "github.com/svcplatform/svc/gen/svc/webhook/v1"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/event"
)

// Subscription orderings (CONTRACT §14).
const (
	// OrderingNone: deliveries run in parallel.
	OrderingNone = "none"
	// OrderingConversation: the events of one ordering key (svcchat: one
	// conversation) go to the app one at a time, in the order they were
	// emitted; a failing one holds back only its own key.
	OrderingConversation = "conversation"
)

// Register adds the WebhookService methods to p, the gateway's in-process
// plugin.
func (s *Service) Register(p *sdk.Plugin) {
	methods := webhookv1.File_svc_webhook_v1_webhook_proto.Services().ByName("WebhookService").Methods()
	sdk.Handle(p, methods.ByName("ListSubscriptions"), s.listSubscriptions)
	sdk.Handle(p, methods.ByName("SaveSubscription"), s.saveSubscription)
	sdk.Handle(p, methods.ByName("DeleteSubscription"), s.deleteSubscription)
	sdk.Handle(p, methods.ByName("ListDeliveries"), s.listDeliveries)
	sdk.Handle(p, methods.ByName("ReplayDelivery"), s.replayDelivery)
	sdk.Handle(p, methods.ByName("SendTestEvent"), s.sendTestEvent)
	sdk.Handle(p, methods.ByName("ReplayDeliveries"), s.replayDeliveries)
}

// replayRangeLimit bounds the deliveries one range replay queues.
const replayRangeLimit = 10000

// replayDeliveries queues again every failed or held delivery of an app
// whose event happened in [since, until): held ones are sent as they are,
// failed ones as new deliveries of the same event. It counts as one manual
// delivery toward the per-app limit.
func (s *Service) replayDeliveries(ctx context.Context, call *sdk.Call, req *webhookv1.ReplayDeliveriesRequest) (*webhookv1.ReplayDeliveriesResponse, error) {
	app, err := s.app(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	since, until, err := parseRange(req.GetSince(), req.GetUntil(), time.Now())
	if err != nil {
		return nil, err
	}
	statuses := []string{StatusFailed, StatusHeld}
	if st := req.GetStatus(); st != "" {
		statuses = []string{st}
	}
	if err := s.manual.allow(app.ID); err != nil {
		return nil, err
	}
	n, err := s.q.ReplayWebhookDeliveries(ctx, coredb.ReplayWebhookDeliveriesParams{AppID: app.ID, Statuses: statuses,
		Since: pgtype.Timestamptz{Time: since, Valid: true}, Until: pgtype.Timestamptz{Time: until, Valid: true}, MaxRows: replayRangeLimit})
	if err != nil {
		return nil, fmt.Errorf("replay deliveries of app %d: %w", app.ID, err)
	}
	if n > 0 {
		s.notify()
	}
	call.Logger().InfoContext(ctx, "webhook deliveries replayed", "app_id", app.ID, "replayed", n, "since", since, "until", until)
	return &webhookv1.ReplayDeliveriesResponse{Success: true, Replayed: n}, nil
}

// parseRange reads a replay's since (required) and until (default now),
// RFC 3339, since before until; a bad one is refused naming it.
func parseRange(sinceText, untilText string, now time.Time) (since, until time.Time, err error) {
	if sinceText == "" {
		return since, until, sdk.Invalid("since", "Invalid parameter: since is required (RFC 3339, e.g. 2026-01-02T15:04:05Z).")
	}
	if since, err = time.Parse(time.RFC3339, sinceText); err != nil {
		return since, until, sdk.Invalid("since", "Invalid parameter: since must be an RFC 3339 time, e.g. 2026-01-02T15:04:05Z.")
	}
	until = now
	if untilText != "" {
		if until, err = time.Parse(time.RFC3339, untilText); err != nil {
			return since, until, sdk.Invalid("until", "Invalid parameter: until must be an RFC 3339 time, e.g. 2026-01-02T15:04:05Z.")
		}
	}
	if !since.Before(until) {
		return since, until, sdk.Invalid("until", "Invalid parameter: until must be after since.")
	}
	return since, until, nil
}

// app loads the app a node names. Who may act on it was decided by the
// gateway from the method's access option (app_role) before the call got
// here; an unknown app is not found.
func (s *Service) app(ctx context.Context, appID string) (coredb.WebhookAppRow, error) {
	id, ok := sdk.ParseID(appID)
	if !ok {
		return coredb.WebhookAppRow{}, sdk.NotFound("App " + appID)
	}
	app, err := s.q.WebhookApp(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return coredb.WebhookAppRow{}, sdk.NotFound("App " + appID)
	}
	if err != nil {
		return coredb.WebhookAppRow{}, fmt.Errorf("look up app %s: %w", appID, err)
	}
	return app, nil
}

func (s *Service) listSubscriptions(ctx context.Context, call *sdk.Call, req *webhookv1.ListSubscriptionsRequest) (*webhookv1.ListSubscriptionsResponse, error) {
	app, err := s.app(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	res := &webhookv1.ListSubscriptionsResponse{}
	sub, err := s.q.GetWebhookSubscription(ctx, app.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return res, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read subscription of app %d: %w", app.ID, err)
	}
	res.Data = []*webhookv1.Subscription{{CallbackUrl: sub.CallbackUrl, Events: sub.Events, Active: sub.Active, Ordering: sub.Ordering}}
	return res, nil
}

// saveSubscription checks the URL against the network rules, runs the
// verification handshake, then stores the subscription, enabled.
func (s *Service) saveSubscription(ctx context.Context, call *sdk.Call, req *webhookv1.SaveSubscriptionRequest) (*webhookv1.SaveSubscriptionResponse, error) {
	app, err := s.app(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	events, err := s.eventList(req.GetEvents())
	if err != nil {
		return nil, err
	}
	if err := s.checkProducts(ctx, app.ID, events); err != nil {
		return nil, err
	}
	if req.GetVerifyToken() == "" {
		return nil, sdk.Invalid("verify_token", "Invalid parameter: verify_token is required.")
	}
	dev := app.Mode != "live"
	u, err := parseCallback(req.GetCallbackUrl(), dev)
	if err == nil {
		err = s.checkCallbackHost(ctx, u, dev)
	}
	if err == nil {
		err = s.verifyCallback(ctx, u, dev, req.GetVerifyToken())
	}
	if err != nil {
		return nil, sdk.Invalid("callback_url", "Invalid parameter: %v.", err)
	}
	ordering := req.GetOrdering()
	if ordering == "" {
		ordering = OrderingNone
	}
	if err := s.q.SaveWebhookSubscription(ctx, coredb.SaveWebhookSubscriptionParams{
		AppID: app.ID, CallbackUrl: u.String(), Events: events, Ordering: ordering,
	}); err != nil {
		return nil, fmt.Errorf("save subscription of app %d: %w", app.ID, err)
	}
	call.Logger().InfoContext(ctx, "webhook subscription saved", "app_id", app.ID, "host", u.Host, "events", events)
	return &webhookv1.SaveSubscriptionResponse{Success: true}, nil
}

// knownEvent reports whether a loaded plugin declares event type t.
func (s *Service) knownEvent(t string) bool {
	return s.eventTypes != nil && slices.Contains(s.eventTypes(), t)
}

// eventList checks that every type is known and drops repeats.
func (s *Service) eventList(types []string) ([]string, error) {
	if len(types) == 0 {
		return nil, sdk.Invalid("events", "Invalid parameter: events must list at least one event type.")
	}
	out := make([]string, 0, len(types))
	for _, t := range types {
		if !s.knownEvent(t) {
			return nil, sdk.Invalid("events", "Invalid parameter: events holds %q, which is not an event type.", t)
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// checkProducts refuses event types of a product the app does not have
// (CONTRACT §15): it could never receive them.
func (s *Service) checkProducts(ctx context.Context, appID int64, events []string) error {
	missing, err := s.q.WebhookEventsWithoutProduct(ctx, coredb.WebhookEventsWithoutProductParams{AppID: appID, Events: events})
	if err != nil {
		return fmt.Errorf("products of app %d: %w", appID, err)
	}
	if len(missing) > 0 {
		return sdk.Invalid("events", "Invalid parameter: events holds %q, an event of the product %s, which the app does not have "+
			"(it is neither enabled on the app nor carried by any of its Page links).", missing[0].EventType, missing[0].Product)
	}
	return nil
}

func (s *Service) deleteSubscription(ctx context.Context, call *sdk.Call, req *webhookv1.DeleteSubscriptionRequest) (*webhookv1.DeleteSubscriptionResponse, error) {
	app, err := s.app(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	if _, err := s.q.DeleteWebhookSubscription(ctx, app.ID); err != nil {
		return nil, fmt.Errorf("delete subscription of app %d: %w", app.ID, err)
	}
	return &webhookv1.DeleteSubscriptionResponse{Success: true}, nil
}

// listDeliveries pages through an app's deliveries, newest first, each with
// its attempts.
func (s *Service) listDeliveries(ctx context.Context, call *sdk.Call, req *webhookv1.ListDeliveriesRequest) (*webhookv1.ListDeliveriesResponse, error) {
	app, err := s.app(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	// Cursors are the deliveries' seq.
	w, err := sdk.ParseWindow(req.GetLimit(), req.GetAfter(), req.GetBefore())
	if err != nil {
		return nil, err
	}
	status, eventType := optional(req.GetStatus()), optional(req.GetEventType())
	type row = coredb.ListWebhookDeliveriesOlderRow
	var rows []row
	if w.Before != 0 {
		newer, err := s.q.ListWebhookDeliveriesNewer(ctx, coredb.ListWebhookDeliveriesNewerParams{
			AppID: app.ID, Cursor: w.Before, Status: status, EventType: eventType, MaxRows: w.Fetch(),
		})
		if err != nil {
			return nil, fmt.Errorf("list deliveries of app %d: %w", app.ID, err)
		}
		for _, r := range newer {
			rows = append(rows, row(r))
		}
	} else {
		cursor := int64(math.MaxInt64)
		if w.After != 0 {
			cursor = w.After
		}
		if rows, err = s.q.ListWebhookDeliveriesOlder(ctx, coredb.ListWebhookDeliveriesOlderParams{
			AppID: app.ID, Cursor: cursor, Status: status, EventType: eventType, MaxRows: w.Fetch(),
		}); err != nil {
			return nil, fmt.Errorf("list deliveries of app %d: %w", app.ID, err)
		}
	}
	// Fetched oldest first from a before cursor: Page puts them back.
	rows, paging := sdk.Page(w, rows, func(r row) int64 { return r.Seq })
	res := &webhookv1.ListDeliveriesResponse{Data: make([]*webhookv1.Delivery, len(rows))}
	paging.Set(res)
	for i, r := range rows {
		var log []attemptEntry
		if err := json.Unmarshal(r.Attempts, &log); err != nil {
			return nil, fmt.Errorf("read attempts of delivery %s: %w", r.ID, err)
		}
		d := &webhookv1.Delivery{Id: r.ID, EventId: r.EventID, EventType: r.EventType, Status: r.Status,
			Attempts: make([]*webhookv1.Attempt, len(log))}
		for j, a := range log {
			d.Attempts[j] = &webhookv1.Attempt{
				At: a.At.UTC().Format(time.RFC3339), StatusCode: int32(a.StatusCode), LatencyMs: int32(min(a.LatencyMs, math.MaxInt32)),
				Error: a.Error, ResponseExcerpt: a.ResponseExcerpt, Via: a.Via,
			}
		}
		res.Data[i] = d
	}
	return res, nil
}

// replayDelivery queues the delivery's event again, to the same app, as a
// new delivery.
func (s *Service) replayDelivery(ctx context.Context, call *sdk.Call, req *webhookv1.ReplayDeliveryRequest) (*webhookv1.ReplayDeliveryResponse, error) {
	d, err := s.q.GetWebhookDelivery(ctx, req.GetDeliveryId())
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, sdk.NotFound("Delivery " + req.GetDeliveryId())
	}
	if err != nil {
		return nil, fmt.Errorf("read delivery %s: %w", req.GetDeliveryId(), err)
	}
	// The node names a delivery, not an app: the gateway could not check
	// the caller's standing on the app, so the same rule is applied here.
	if s.guard == nil {
		return nil, fmt.Errorf("webhook: no app guard configured")
	}
	if err := s.guard(ctx, sdk.FormatID(d.AppID), pluginv1.AppRole_APP_ROLE_DEVELOPER); err != nil {
		return nil, err
	}
	if err := s.manual.allow(d.AppID); err != nil {
		return nil, err
	}
	id, err := s.q.InsertWebhookDelivery(ctx, coredb.InsertWebhookDeliveryParams{
		AppID: d.AppID, EventID: d.EventID, EventType: d.EventType, PageID: d.PageID,
		EventCreatedAt: d.EventCreatedAt, Data: d.Data, Test: d.Test, ReplayOf: &d.Seq, PageLink: d.PageLink,
		UserID: d.UserID,
	})
	if errors.Is(err, pgx.ErrNoRows) {
		// A delivery made through the app's link to a Page whose app is
		// no longer entitled to the event (CONTRACT §15).
		return nil, sdk.Errorf(403, 10, 0, "The app is no longer entitled to this event: its link to the Page or the approved scope that reads it was removed.")
	}
	if err != nil {
		return nil, fmt.Errorf("replay delivery %s: %w", d.ID, err)
	}
	s.notify()
	call.Logger().InfoContext(ctx, "webhook delivery replayed", "delivery_id", d.ID, "replay_id", id, "app_id", d.AppID)
	return &webhookv1.ReplayDeliveryResponse{Id: id}, nil
}

// testData is the data of every test event.
var testData = []byte(`{"test":true}`)

// sendTestEvent sends a made-up event of the given type to the app's
// callback (or its listener), whatever its event filter.
func (s *Service) sendTestEvent(ctx context.Context, call *sdk.Call, req *webhookv1.SendTestEventRequest) (*webhookv1.SendTestEventResponse, error) {
	app, err := s.app(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	if err := s.manual.allow(app.ID); err != nil {
		return nil, err
	}
	if !s.knownEvent(req.GetType()) {
		return nil, sdk.Invalid("type", "Invalid parameter: type %q is not an event type.", req.GetType())
	}
	if _, err := s.q.GetWebhookSubscription(ctx, app.ID); errors.Is(err, pgx.ErrNoRows) && !s.appListening(ctx, app.ID) {
		return nil, sdk.Errorf(http.StatusBadRequest, 100, 0, "App %d has no webhook subscription (nor a listener, gateway listen) to send a test event to.", app.ID)
	} else if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("read subscription of app %d: %w", app.ID, err)
	}
	eventID := event.NewID()
	if _, err := s.q.InsertWebhookDelivery(ctx, coredb.InsertWebhookDeliveryParams{
		AppID: app.ID, EventID: eventID, EventType: req.GetType(),
		EventCreatedAt: pgtype.Timestamptz{Time: time.Now(), Valid: true}, Data: testData, Test: true,
	}); err != nil {
		return nil, fmt.Errorf("queue test event for app %d: %w", app.ID, err)
	}
	s.notify()
	return &webhookv1.SendTestEventResponse{Id: eventID}, nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
