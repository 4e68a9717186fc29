package outbox_test

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/svcplatform/svc/internal/outbox"
)

func TestARowCarriesTheEventAsTheOutboxStoresIt(t *testing.T) {
	t.Parallel()
	r, err := outbox.New("book.post.created", "501", "", "conv_1", map[string]any{"content": "hi ☕", "n": 1})
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^evt_[0-9A-Za-z]{22}$`).MatchString(r.ID) {
		t.Errorf("id %q is not evt_ and 22 base-62 characters", r.ID)
	}
	if r.Type != "book.post.created" || r.PageID != "501" || r.AppID != "" || r.OrderingKey != "conv_1" {
		t.Errorf("row = %+v", r)
	}
	var data map[string]any
	if err := json.Unmarshal(r.Data, &data); err != nil || data["content"] != "hi ☕" || data["n"] != 1.0 {
		t.Errorf("data %s (%v)", r.Data, err)
	}
	if other := outbox.NewID(); other == r.ID {
		t.Error("two ids are equal")
	}
}

func TestAnEventWithoutATypeOrWithDataThatIsNotJSONIsRefused(t *testing.T) {
	t.Parallel()
	if _, err := outbox.New("", "501", "", "", nil); err == nil {
		t.Error("an event without a type was made")
	}
	if _, err := outbox.New("x.y", "501", "", "", func() {}); err == nil {
		t.Error("an event whose data does not marshal was made")
	}
}
