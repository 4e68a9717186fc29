package e2e

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"

	lensesv1 "github.com/svcplatform/svc/gen/svc/lenses/v1"
	"github.com/svcplatform/svc/gen/svc/lenses/v1/lensesv1connect"
)

// Issue #32 item 7, played through the public API: a partner's app with
// the lenses product makes a lens; it reaches the chat app's carousel
// only once staff approve it from the review queue; a rejection carries
// its reason back to the partner; only staff read the queue; another app
// cannot touch the lens; the seeded lenses were made the same way.
func TestAPartnersLensReachesTheCarouselOnlyAfterStaffApproveIt(t *testing.T) {
	t.Parallel()
	w := newLifecycleWorld(t)
	consumer := w.c.Users["consumer"]
	person := signInAt(t, w.g.URL, consumer.Username, consumer.Password)
	newApp := func(name string, products ...string) createdApp {
		res, body := w.post(t, w.session, map[string]any{"node": "me/apps", "name": name,
			"redirect_uris": []string{lifecycleRedirect}, "products": products}, nil)
		if res.StatusCode != 200 {
			t.Fatalf("register %s: %d %s", name, res.StatusCode, body)
		}
		return decode[createdApp](t, body)
	}
	studio, rival := newApp("Lens Studio", "lenses"), newApp("Rival Lenses", "lenses")
	type lens struct {
		ID              string `json:"id"`
		Name            string `json:"name"`
		Status          string `json:"status"`
		RejectionReason string `json:"rejection_reason"`
	}
	carousel := func() []string {
		res, body := do(t, "GET", w.g.URL+"/api/mobile/lenses", nil, map[string]string{"Authorization": "Bearer " + person})
		if res.StatusCode != 200 {
			t.Fatalf("carousel: %d %s", res.StatusCode, body)
		}
		var names []string
		for _, l := range decode[struct{ Data []lens }](t, body).Data {
			names = append(names, l.Name)
		}
		return names
	}
	icon := "data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22/%3E"

	t.Run("the seeded lenses were made, reviewed and approved through the same path", func(t *testing.T) {
		if got := strings.Join(carousel(), ","); got != "Sunny,Ocean,Mono" {
			t.Fatalf("carousel %q", got)
		}
		seeded := decode[struct{ Data []lens }](t, w.mustGet(t, w.session, "app/"+w.c.App.ID+"/lenses")).Data
		if len(seeded) != 3 || seeded[0].Status != "approved" {
			t.Fatalf("the seeded app's lenses %+v", seeded)
		}
	})

	made := decode[lens](t, w.mustPost(t, studio.APIKey, map[string]any{"node": "app/" + studio.ID + "/lenses", "name": "Glitter", "icon_url": icon}))
	rejected := decode[lens](t, w.mustPost(t, studio.APIKey, map[string]any{"node": "app/" + studio.ID + "/lenses", "name": "Smudge", "icon_url": icon}))
	if made.Status != "draft" || made.ID == "" {
		t.Fatalf("made %+v", made)
	}
	for _, l := range []lens{made, rejected} {
		w.mustPost(t, studio.APIKey, map[string]any{"node": "app/" + studio.ID + "/lenses/" + l.ID, "action": "submit"})
	}
	if slices.Contains(carousel(), "Glitter") {
		t.Fatal("a lens in review is offered")
	}

	queue := func(token string) (*http.Response, []byte) {
		return do(t, "GET", w.g.URL+"/api/developers/admin/lenses/review-queue", nil, map[string]string{"Authorization": "Bearer " + token})
	}
	decide := func(token, body string) (*http.Response, []byte) {
		return do(t, "POST", w.g.URL+"/api/developers/admin/lenses/review-queue", strings.NewReader(body),
			map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json"})
	}
	t.Run("only staff read and decide the review queue", func(t *testing.T) {
		for _, token := range []string{w.session, person} {
			res, body := queue(token)
			wantGraphError(t, res, body, http.StatusForbidden, 200, 2069005)
			res, body = decide(token, `{"id":"`+made.ID+`","decision":"approve"}`)
			wantGraphError(t, res, body, http.StatusForbidden, 200, 2069005)
		}
		res, body := queue(studio.APIKey)
		if res.StatusCode != http.StatusForbidden {
			t.Fatalf("an app key reads the queue: %d %s", res.StatusCode, body)
		}
		res, body = queue(w.staff)
		q := decode[struct {
			Data []struct{ ID, AppID, AppName, Name string }
		}](t, body).Data
		if res.StatusCode != 200 || len(q) != 2 || q[0].Name != "Glitter" || q[0].AppName != "Lens Studio" || q[0].AppID != studio.ID {
			t.Fatalf("queue: %d %s", res.StatusCode, body)
		}
	})

	t.Run("another app cannot touch the lens", func(t *testing.T) {
		// Naming its own app: the lens is not one of its lenses.
		res, body := w.post(t, rival.APIKey, map[string]any{"node": "app/" + rival.ID + "/lenses/" + made.ID, "action": "withdraw"}, nil)
		wantGraphError(t, res, body, http.StatusNotFound, 100, 33)
		// Naming the lens's app: its key acts only on its own app.
		res, body = w.post(t, rival.APIKey, map[string]any{"node": "app/" + studio.ID + "/lenses/" + made.ID, "action": "withdraw"}, nil)
		wantGraphError(t, res, body, http.StatusForbidden, 200, 2069004)
		res, body = w.get(t, rival.APIKey, map[string][]string{"node": {"app/" + studio.ID + "/lenses"}})
		wantGraphError(t, res, body, http.StatusForbidden, 200, 2069004)
	})

	t.Run("staff approve: the lens reaches the carousel", func(t *testing.T) {
		if res, body := decide(w.staff, `{"id":"`+made.ID+`","decision":"approve"}`); res.StatusCode != 200 {
			t.Fatalf("approve: %d %s", res.StatusCode, body)
		}
		if got := carousel(); !slices.Contains(got, "Glitter") {
			t.Fatalf("carousel %v", got)
		}
	})

	t.Run("the Go API client of the SDK catalog reads the carousel and makes a lens", func(t *testing.T) {
		c := lensesv1connect.NewLensesServiceClient(http.DefaultClient, w.g.URL)
		req := connect.NewRequest(&lensesv1.ListLensesRequest{})
		req.Header().Set("Authorization", "Bearer "+person)
		res, err := c.ListLenses(context.Background(), req)
		if err != nil || !slices.ContainsFunc(res.Msg.GetData(), func(l *lensesv1.CarouselLens) bool { return l.GetName() == "Glitter" }) {
			t.Fatalf("ListLenses: %v %v", res, err)
		}
		create := connect.NewRequest(&lensesv1.CreateLensRequest{AppId: studio.ID, Name: "Sparkle", IconUrl: "data:image/png;base64,iVBORw0KGgo="})
		create.Header().Set("Authorization", "Bearer "+studio.APIKey)
		made, err := c.CreateLens(context.Background(), create)
		if err != nil || made.Msg.GetStatus() != "draft" {
			t.Fatalf("CreateLens: %v %v", made, err)
		}
	})

	t.Run("staff reject with a reason the partner reads; a second decision conflicts", func(t *testing.T) {
		res, body := decide(w.staff, `{"id":"`+rejected.ID+`","decision":"reject"}`)
		wantGraphError(t, res, body, http.StatusBadRequest, 100, 0)
		if res, body := decide(w.staff, `{"id":"`+rejected.ID+`","decision":"reject","reason":"The effect hides the face"}`); res.StatusCode != 200 {
			t.Fatalf("reject: %d %s", res.StatusCode, body)
		}
		res, body = decide(w.staff, `{"id":"`+rejected.ID+`","decision":"approve"}`)
		wantGraphError(t, res, body, http.StatusConflict, 10, 2018305)
		mine := decode[struct{ Data []lens }](t, w.mustGet(t, studio.APIKey, "app/"+studio.ID+"/lenses")).Data
		i := slices.IndexFunc(mine, func(l lens) bool { return l.ID == rejected.ID })
		if i < 0 || mine[i].Status != "rejected" || mine[i].RejectionReason != "The effect hides the face" {
			t.Fatalf("the partner's lenses %+v", mine)
		}
		if slices.Contains(carousel(), "Smudge") {
			t.Fatal("a rejected lens is offered")
		}
	})

	t.Run("an app without the lenses product makes no lens", func(t *testing.T) {
		res, body := w.post(t, w.app.APIKey, map[string]any{"node": "app/" + w.app.ID + "/lenses", "name": "X", "icon_url": icon}, nil)
		wantGraphError(t, res, body, http.StatusForbidden, 10, 2018303)
	})
}
