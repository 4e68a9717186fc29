package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	wearablesv1 "github.com/svcplatform/svc/gen/svc/wearables/v1"
	"github.com/svcplatform/svc/plugins/wearables/internal/wearablesdb"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/event"
)

// Events the plugin emits (CONTRACT §6).
const (
	EventCardDelivered   = "wearables.card.delivered"
	EventActionConfirmed = "wearables.action.confirmed"
)

// Options tune the plugin; the zero value of a field means its default.
type Options struct {
	// SimulateDevices pairs a simulated, self-acknowledging device for a
	// user who has none on their first push (development only).
	SimulateDevices bool
	// CardTTL is how long a card waits for the device; default 24 hours.
	CardTTL time.Duration
	// MaxWaiting bounds the waiting cards per user; default 100.
	MaxWaiting int
	// Poll is how often an open stream and the simulated devices look for
	// cards pushed through other processes; default 1 second.
	Poll time.Duration
	// Sweep is how often lapsed cards are marked expired; default 1 minute.
	Sweep time.Duration
}

func (o Options) withDefaults() Options {
	if o.CardTTL <= 0 {
		o.CardTTL = 24 * time.Hour
	}
	if o.MaxWaiting <= 0 {
		o.MaxWaiting = 100
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Sweep <= 0 {
		o.Sweep = time.Minute
	}
	return o
}

type service struct {
	pool *pgxpool.Pool
	opts Options
	log  *slog.Logger
	hub  hub
	// wake nudges the simulated devices after a push in this process.
	wake chan struct{}
}

func newService(pool *pgxpool.Pool, opts Options, log *slog.Logger) *service {
	return &service{pool: pool, opts: opts.withDefaults(), log: log, wake: make(chan struct{}, 1)}
}

func (s *service) register(p *sdk.Plugin) {
	file := wearablesv1.File_svc_wearables_v1_wearables_proto
	cards := file.Services().ByName("WearablesService").Methods()
	sdk.Handle(p, cards.ByName("PushCard"), s.pushCard)
	sdk.OnUserLeft(p, s.userLeft)
	sdk.Handle(p, cards.ByName("ConfirmAction"), s.confirmAction)
	sdk.Handle(p, cards.ByName("ListAppCards"), s.listAppCards)
	sdk.Handle(p, cards.ByName("ListAppDevices"), s.listAppDevices)
	device := file.Services().ByName("DeviceService").Methods()
	sdk.HandleStream(p, device.ByName("StreamCards"), s.streamCards)
	sdk.Handle(p, device.ByName("AckCard"), s.ackCard)
}

// pushCard queues a card for the wearer's device and answers before it is
// delivered. The gateway has checked the user token and wearables:push.
func (s *service) pushCard(ctx context.Context, call *sdk.Call, req *wearablesv1.PushCardRequest) (*wearablesv1.PushCardResponse, error) {
	p := call.Principal()
	if req.GetUserId() != p.UserID {
		return nil, sdk.Errorf(http.StatusForbidden, 200, SubcodeNotTheWearer,
			"A token can push cards to its own user only: user_id must be the token's user.")
	}
	card := req.GetCard()
	if err := noNUL([2]string{"card.title", card.GetTitle()}, [2]string{"card.body", card.GetBody()}); err != nil {
		return nil, err
	}
	actions := make([]cardAction, len(card.GetActions()))
	for i, a := range card.GetActions() {
		if err := noNUL([2]string{fmt.Sprintf("card.actions[%d].id", i), a.GetId()},
			[2]string{fmt.Sprintf("card.actions[%d].label", i), a.GetLabel()}); err != nil {
			return nil, err
		}
		actions[i] = cardAction{ID: a.GetId(), Label: a.GetLabel()}
	}
	encoded, err := json.Marshal(actions)
	if err != nil {
		return nil, err
	}
	var row wearablesdb.WearablesCard
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := wearablesdb.New(tx)
		if s.opts.SimulateDevices {
			if err := pairSimulatedDevice(ctx, q, p.UserID); err != nil {
				return err
			}
		}
		var err error
		row, err = q.InsertCard(ctx, wearablesdb.InsertCardParams{
			UserID: p.UserID, AppID: p.AppID, Title: card.GetTitle(), Body: card.GetBody(), Actions: encoded,
			TtlSeconds: s.opts.CardTTL.Seconds(),
		})
		if err != nil {
			return err
		}
		_, err = q.ExpireDisplacedCards(ctx, wearablesdb.ExpireDisplacedCardsParams{UserID: p.UserID, Keep: int32(s.opts.MaxWaiting)})
		return err
	})
	if err != nil {
		return nil, err
	}
	s.hub.notify(p.UserID)
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return &wearablesv1.PushCardResponse{CardId: strconv.FormatInt(row.ID, 10), Status: string(Queued)}, nil
}

// confirmAction records the wearer's action on a delivered card and emits
// wearables.action.confirmed to the app that pushed it.
func (s *service) confirmAction(ctx context.Context, call *sdk.Call, req *wearablesv1.ConfirmActionRequest) (*wearablesv1.ConfirmActionResponse, error) {
	user := call.Principal().UserID
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := wearablesdb.New(tx)
		card, err := lockCard(ctx, q, req.GetCardId(), user)
		if err != nil {
			return err
		}
		if !offers(card.Actions, req.GetActionId()) {
			return sdk.Invalid("action_id", "Invalid parameter: action_id %q is not an action of card %s.", req.GetActionId(), req.GetCardId())
		}
		trigger := Confirm
		if card.ActionID != nil && *card.ActionID == req.GetActionId() {
			trigger = ConfirmAgain
		}
		to, emit, err := transition(currentStatus(card), trigger)
		if err != nil {
			return err
		}
		if CardStatus(card.Status) != to {
			action := req.GetActionId()
			if err := q.SetCardStatus(ctx, wearablesdb.SetCardStatusParams{ID: card.ID, Status: string(to), ActionID: &action}); err != nil {
				return err
			}
		}
		if !emit {
			return nil
		}
		_, err = event.Emit(ctx, tx, event.Event{
			Type: EventActionConfirmed, AppID: card.AppID, UserID: card.UserID,
			Data: map[string]string{"cardId": req.GetCardId(), "actionId": req.GetActionId(), "userId": card.UserID},
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &wearablesv1.ConfirmActionResponse{CardId: req.GetCardId(), ActionId: req.GetActionId(), Status: string(Confirmed)}, nil
}

// ackCard records that the caller's device received a card. A real device
// acknowledging takes the place of a simulated one.
func (s *service) ackCard(ctx context.Context, call *sdk.Call, req *wearablesv1.AckCardRequest) (*wearablesv1.AckCardResponse, error) {
	user := call.Principal().UserID
	var res *wearablesv1.AckCardResponse
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := wearablesdb.New(tx)
		card, err := lockCard(ctx, q, req.GetCardId(), user)
		if err != nil {
			return err
		}
		device, err := pairRealDevice(ctx, q, user)
		if err != nil {
			return err
		}
		to, deviceID, err := acknowledge(ctx, tx, card, device.ID)
		if err != nil {
			return err
		}
		res = &wearablesv1.AckCardResponse{CardId: req.GetCardId(), DeviceId: strconv.FormatInt(deviceID, 10), Status: string(to)}
		return nil
	})
	return res, err
}

// acknowledge applies Ack to a locked card for device, emitting
// wearables.card.delivered in tx when the card becomes delivered. It
// answers the card's status and the device that holds it.
func acknowledge(ctx context.Context, tx pgx.Tx, card wearablesdb.LockCardRow, deviceID int64) (CardStatus, int64, error) {
	to, emit, err := transition(currentStatus(card), Ack)
	if err != nil {
		return "", 0, err
	}
	if !emit {
		if card.DeviceID != nil {
			deviceID = *card.DeviceID
		}
		return to, deviceID, nil
	}
	q := wearablesdb.New(tx)
	if err := q.SetCardStatus(ctx, wearablesdb.SetCardStatusParams{ID: card.ID, Status: string(to), DeviceID: &deviceID}); err != nil {
		return "", 0, err
	}
	_, err = event.Emit(ctx, tx, event.Event{
		Type: EventCardDelivered, AppID: card.AppID, UserID: card.UserID,
		Data: map[string]string{
			"cardId": strconv.FormatInt(card.ID, 10), "userId": card.UserID, "deviceId": strconv.FormatInt(deviceID, 10),
		},
	})
	return to, deviceID, err
}

// lockCard reads a card of user for a transition. A card of another user
// does not exist for the caller, so its existence is not revealed.
func lockCard(ctx context.Context, q *wearablesdb.Queries, cardID, user string) (wearablesdb.LockCardRow, error) {
	id, ok := sdk.ParseID(cardID)
	if !ok {
		return wearablesdb.LockCardRow{}, sdk.NotFound("Card " + cardID)
	}
	card, err := q.LockCard(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && card.UserID != user) {
		return wearablesdb.LockCardRow{}, sdk.NotFound("Card " + cardID)
	}
	return card, err
}

// currentStatus is the card's status with a lapsed expiry applied: the
// sweep that stores it runs only now and then.
func currentStatus(card wearablesdb.LockCardRow) CardStatus {
	status := CardStatus(card.Status)
	if card.Lapsed {
		if to, _, err := transition(status, Expire); err == nil {
			return to
		}
	}
	return status
}

// pairRealDevice answers the user's paired real device, pairing one when
// the user has none or only a simulated one, which it replaces.
func pairRealDevice(ctx context.Context, q *wearablesdb.Queries, user string) (wearablesdb.WearablesDevice, error) {
	d, err := q.PairedDevice(ctx, user)
	switch {
	case err == nil && !d.Simulated:
		return d, nil
	case err == nil:
		if err := q.ReplaceDevice(ctx, d.ID); err != nil {
			return d, err
		}
	case !errors.Is(err, pgx.ErrNoRows):
		return d, err
	}
	d, err = q.PairDevice(ctx, wearablesdb.PairDeviceParams{UserID: user, Simulated: false})
	if errors.Is(err, pgx.ErrNoRows) {
		// Another connection of the same user paired it meanwhile.
		return q.PairedDevice(ctx, user)
	}
	return d, err
}

// pairSimulatedDevice pairs a simulated device for a user who has none.
// Looking first keeps the sequence from being spent on every push.
func pairSimulatedDevice(ctx context.Context, q *wearablesdb.Queries, user string) error {
	_, err := q.PairedDevice(ctx, user)
	if !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	// No row when a concurrent push paired one: that is fine.
	if _, err := q.PairDevice(ctx, wearablesdb.PairDeviceParams{UserID: user, Simulated: true}); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("pair a simulated device: %w", err)
	}
	return nil
}

// cardAction is one action as stored in wearables.cards.actions.
type cardAction struct {
	ID    string `json:"id"`
	Label string `json:"label"`
}

func decodeActions(raw []byte) []cardAction {
	var actions []cardAction
	_ = json.Unmarshal(raw, &actions) // written by pushCard only
	return actions
}

func offers(raw []byte, actionID string) bool {
	for _, a := range decodeActions(raw) {
		if a.ID == actionID {
			return true
		}
	}
	return false
}

// noNUL refuses text PostgreSQL cannot store, naming the first field
// (name, value) that holds a NUL.
func noNUL(fields ...[2]string) error {
	for _, f := range fields {
		if strings.ContainsRune(f[1], 0) {
			return sdk.Invalid(f[0], "Invalid parameter: %s must not contain the NUL character.", f[0])
		}
	}
	return nil
}

// hub wakes this process's open device streams when a card is pushed here.
type hub struct {
	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{}
}

func (h *hub) subscribe(user string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[string]map[chan struct{}]struct{}{}
	}
	if h.subs[user] == nil {
		h.subs[user] = map[chan struct{}]struct{}{}
	}
	h.subs[user][ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs[user], ch)
		if len(h.subs[user]) == 0 {
			delete(h.subs, user)
		}
		h.mu.Unlock()
	}
}

func (h *hub) notify(user string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[user] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
