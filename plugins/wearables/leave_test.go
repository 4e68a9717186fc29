package main

import (
	"testing"

	"github.com/svcplatform/svc/plugins/internal/leavetest"
	"github.com/svcplatform/svc/sdk/plugintest"
)

// A person who leaves takes their cards and devices with them; another
// wearer's device stays.
func TestAPersonWhoLeftHasNoCardsOrDevicesLeft(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	s, _ := b.connect(t, device)
	o, _ := b.connect(t, otherDevice)
	b.push(t, "yes", "no")
	b.push(t)
	s.cancel()
	<-s.done
	leavetest.Leave(t, b.tp, wearer)
	leavetest.Leave(t, b.tp, wearer)
	for q, want := range map[string]int{
		`SELECT count(*) FROM wearables.cards WHERE user_id = '` + wearer + `'`:   0,
		`SELECT count(*) FROM wearables.devices WHERE user_id = '` + wearer + `'`: 0,
		`SELECT count(*) FROM wearables.devices WHERE user_id = '` + other + `'`:  1,
	} {
		if got := plugintest.Count(t, b.pool, q); got != want {
			t.Errorf("%s = %d, want %d", q, got, want)
		}
	}
	o.cancel()
	<-o.done
}
