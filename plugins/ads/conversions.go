package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	adsv1 "github.com/svcplatform/svc/gen/svc/ads/v1"
	"github.com/svcplatform/svc/plugins/ads/internal/adsdb"
	"github.com/svcplatform/svc/sdk"
)

const (
	// dedupWindow is how long an event_id is remembered: the same id
	// again within it is not counted (Meta's deduplication window).
	dedupWindow = 48 * time.Hour
	// attributionWindow is how long before a conversion a click on an ad
	// makes the conversion that ad's (Meta's 7-day click attribution).
	attributionWindow = 7 * 24 * time.Hour
	// maxEventAge is how old an event_time may be, as Meta accepts.
	maxEventAge = 7 * 24 * time.Hour
	// clockSkew is how far in the future an event_time may be.
	clockSkew = time.Minute
)

// attributionSpan is when a click must have been for a conversion at
// event time at to count for its ad, both ends included: from 7 days
// before to the event. event_time has whole seconds, so the event's
// second is all of it (to the microsecond, the database's precision): a
// click earlier in that second is before it.
func attributionSpan(at time.Time) (from, to time.Time) {
	return at.Add(-attributionWindow), at.Add(time.Second - time.Microsecond)
}

// checkedEvent is one event of a batch, its hashes parsed.
type checkedEvent struct {
	ev    *adsv1.ServerEvent
	at    time.Time
	users [][]byte
}

// checkEvent checks event i of a batch at now; a refusal names the field
// as data[i].<field>.
func checkEvent(i int, ev *adsv1.ServerEvent, now time.Time) (checkedEvent, error) {
	field := func(f string) string { return fmt.Sprintf("data[%d].%s", i, f) }
	if err := plainText(field("event_name"), ev.GetEventName()); err != nil {
		return checkedEvent{}, err
	}
	if err := plainText(field("event_id"), ev.GetEventId()); err != nil {
		return checkedEvent{}, err
	}
	at := time.Unix(ev.GetEventTime(), 0).UTC()
	if ev.GetEventTime() <= 0 || at.After(now.Add(clockSkew)) || at.Before(now.Add(-maxEventAge)) {
		return checkedEvent{}, sdk.Invalid(field("event_time"), "Invalid parameter: %s must be a Unix time in seconds within the last 7 days, not in the future.", field("event_time"))
	}
	ud := ev.GetUserData()
	if len(ud.GetExternalId()) == 0 && len(ud.GetEm()) == 0 {
		return checkedEvent{}, sdk.Invalid(field("user_data"), "Invalid parameter: %s must have external_id or em.", field("user_data"))
	}
	c := checkedEvent{ev: ev, at: at}
	for j, x := range ud.GetExternalId() {
		h, ok := parseHash(x)
		if !ok {
			f := fmt.Sprintf("%s[%d]", field("user_data.external_id"), j)
			return checkedEvent{}, sdk.Invalid(f, "Invalid parameter: %s must be the SHA-256 hex of a user id.", f)
		}
		c.users = append(c.users, h)
	}
	for j, x := range ud.GetEm() {
		if _, ok := parseHash(x); !ok {
			f := fmt.Sprintf("%s[%d]", field("user_data.em"), j)
			return checkedEvent{}, sdk.Invalid(f, "Invalid parameter: %s must be the SHA-256 hex of a normalised email.", f)
		}
	}
	return c, nil
}

// sendConversionEvents stores a batch of conversion events. The batch is
// refused whole when one event is invalid, as Meta does. Events whose
// event_id the account sent in the 48 hours before (or earlier in the
// batch) are received but not stored again. A stored event is attributed
// to the account's ad its person (by external_id; em matches no one, as
// people have no email on the platform) clicked last in the 7 days up to
// its event_time.
func (s *service) sendConversionEvents(ctx context.Context, call *sdk.Call, req *adsv1.SendConversionEventsRequest) (*adsv1.SendConversionEventsResponse, error) {
	acct, err := s.ownedAccount(ctx, call, req.GetAdAccountId())
	if err != nil {
		return nil, err
	}
	now := s.now()
	events := make([]checkedEvent, len(req.GetData()))
	for i, ev := range req.GetData() {
		if events[i], err = checkEvent(i, ev, now); err != nil {
			return nil, err
		}
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := adsdb.New(tx)
		if err := q.LockEvents(ctx, sdk.FormatID(acct.ID)); err != nil {
			return err
		}
		for _, e := range events {
			if id := e.ev.GetEventId(); id != "" {
				seen, err := q.EventSeen(ctx, adsdb.EventSeenParams{AdAccountID: acct.ID, EventID: id, Since: timestamptz(now.Add(-dedupWindow))})
				if err != nil {
					return err
				}
				if seen {
					continue
				}
			}
			p := adsdb.InsertConversionParams{AdAccountID: acct.ID, EventID: e.ev.GetEventId(), EventName: e.ev.GetEventName(),
				EventTime: timestamptz(e.at), Currency: e.ev.GetCustomData().GetCurrency(), ReceivedAt: timestamptz(now)}
			if cd := e.ev.GetCustomData(); cd != nil {
				v := cd.GetValue()
				p.Value = &v
			}
			if len(e.users) > 0 {
				p.UserHash = e.users[0]
				from, to := attributionSpan(e.at)
				ad, err := q.LastClick(ctx, adsdb.LastClickParams{AdAccountID: acct.ID, UserHashes: e.users,
					FromTime: timestamptz(from), ToTime: timestamptz(to)})
				if err == nil {
					p.AdID = &ad
				} else if !errors.Is(err, pgx.ErrNoRows) {
					return err
				}
			}
			if err := q.InsertConversion(ctx, p); err != nil {
				return err
			}
			if p.AdID != nil {
				if err := q.CountConversion(ctx, adsdb.CountConversionParams{AdAccountID: acct.ID, AdID: *p.AdID, Day: day(now)}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &adsv1.SendConversionEventsResponse{EventsReceived: int64(len(events))}, nil
}
