package main

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	wearablesv1 "github.com/svcplatform/svc/gen/svc/wearables/v1"
	"github.com/svcplatform/svc/plugins/wearables/internal/wearablesdb"
	"github.com/svcplatform/svc/sdk"
)

// streamCards connects the caller's device and sends it every card waiting
// for the wearer, then each new one, until the device disconnects. Cards
// stay queued until acknowledged, so a card sent on a stream that broke is
// sent again on the next.
func (s *service) streamCards(ctx context.Context, call *sdk.Call, _ *wearablesv1.StreamCardsRequest, send func(*wearablesv1.StreamCardsResponse) error) error {
	user := call.Principal().UserID
	var device wearablesdb.WearablesDevice
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		device, err = pairRealDevice(ctx, wearablesdb.New(tx), user)
		return err
	})
	if err != nil {
		return err
	}
	// Subscribe before the first read, so that no push falls in between.
	wake, unsubscribe := s.hub.subscribe(user)
	defer unsubscribe()
	connected := &wearablesv1.StreamCardsResponse{Kind: &wearablesv1.StreamCardsResponse_Connected{
		Connected: &wearablesv1.Connected{DeviceId: sdk.FormatID(device.ID)},
	}}
	if err := send(connected); err != nil {
		return err
	}
	poll := time.NewTicker(s.opts.Poll)
	defer poll.Stop()
	sent := map[int64]bool{}
	q := wearablesdb.New(s.pool)
	for {
		cards, err := q.WaitingCards(ctx, wearablesdb.WaitingCardsParams{UserID: user, Lim: int32(s.opts.MaxWaiting)})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		// Remember only what still waits: acknowledged cards leave the set.
		still := make(map[int64]bool, len(cards))
		for _, c := range cards {
			still[c.ID] = true
			if sent[c.ID] {
				continue
			}
			if err := send(&wearablesv1.StreamCardsResponse{Kind: &wearablesv1.StreamCardsResponse_Card{Card: cardProto(c)}}); err != nil {
				return err
			}
		}
		sent = still
		select {
		case <-ctx.Done():
			return nil // the device went away
		case <-wake:
		case <-poll.C:
		}
	}
}

func cardProto(c wearablesdb.WearablesCard) *wearablesv1.Card {
	actions := decodeActions(c.Actions)
	out := &wearablesv1.Card{
		Id: sdk.FormatID(c.ID), Title: c.Title, Body: c.Body, AppId: c.AppID,
		Actions:     make([]*wearablesv1.CardAction, len(actions)),
		CreatedTime: c.CreatedAt.Time.UTC().Format(time.RFC3339),
		ExpiresTime: c.ExpiresAt.Time.UTC().Format(time.RFC3339),
	}
	for i, a := range actions {
		out.Actions[i] = &wearablesv1.CardAction{Id: a.ID, Label: a.Label}
	}
	return out
}

// runKeeper does the plugin's background work until ctx ends: the
// simulated devices acknowledge their cards (development only), and lapsed
// cards are marked expired.
func (s *service) runKeeper(ctx context.Context) {
	poll := time.NewTicker(s.opts.Poll)
	defer poll.Stop()
	sweep := time.NewTicker(s.opts.Sweep)
	defer sweep.Stop()
	for {
		if s.opts.SimulateDevices {
			if err := s.deliverSimulated(ctx); err != nil && ctx.Err() == nil {
				s.log.Error("simulated devices could not acknowledge cards", "error", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-poll.C:
		case <-sweep.C:
			if n, err := wearablesdb.New(s.pool).ExpireLapsedCards(ctx); err != nil && ctx.Err() == nil {
				s.log.Error("expire lapsed cards", "error", err)
			} else if n > 0 {
				s.log.Info("cards expired undelivered", "count", n)
			}
		}
	}
}

// simulatedBatch is how many cards one transaction of the simulated devices
// acknowledges.
const simulatedBatch = 100

// deliverSimulated acknowledges, as their simulated devices, every card
// waiting for a user whose paired device is simulated. Rows are locked with
// SKIP LOCKED, so plugin processes of several gateways share the work and
// a card is acknowledged once.
func (s *service) deliverSimulated(ctx context.Context) error {
	for {
		n := 0
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			q := wearablesdb.New(tx)
			rows, err := q.SimulatedDeliveries(ctx, simulatedBatch)
			if err != nil {
				return err
			}
			n = len(rows)
			for _, r := range rows {
				card, err := q.LockCard(ctx, r.ID)
				if err != nil {
					return err
				}
				if _, _, err := acknowledge(ctx, tx, card, r.DeviceID); err != nil {
					var refusal *sdk.Error
					if errors.As(err, &refusal) {
						continue // expired meanwhile: nothing to deliver
					}
					return err
				}
			}
			return nil
		})
		if err != nil || n < simulatedBatch {
			return err
		}
	}
}
