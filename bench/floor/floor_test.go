package floor

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	booksql "github.com/svcplatform/svc/plugins/book/sql"
	svcchatsql "github.com/svcplatform/svc/plugins/svcchat/sql"
	"github.com/svcplatform/svc/sdk/migrate"
	"github.com/svcplatform/svc/sdk/plugintest"
)

func TestMain(m *testing.M) { plugintest.Main(m, "book", booksql.Migrations()) }

const token = "floor-test-token"

// start serves the floor on a fresh database holding book's and the core
// schema.
func start(t *testing.T) (*httptest.Server, *pgxpool.Pool) {
	t.Helper()
	list, create, err := Queries([]string{"../../" + BookQueries[0]})
	if err != nil {
		t.Fatal(err)
	}
	pool := plugintest.Database(t)
	send, err := SendStatements()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(Config{PublicURL: "https://graph.example/", Token: token, UserID: "7", AppID: "90",
		List: list, Create: create, Send: send}, pool))
	t.Cleanup(srv.Close)
	return srv, pool
}

func call(t *testing.T, method, u, auth, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// The floor's answer to the Graph read is the gateway's document byte for
// byte: book.v1.Post's fields in order under their proto names, only what
// JSON requires escaped (no HTML escaping), the created time in RFC 3339
// UTC, base64url cursors of the ids and the next link with the query's keys
// sorted, as the gateway writes them; no trailing newline.
func TestTheFloorAnswersTheGraphReadWithTheGatewaysBytes(t *testing.T) {
	srv, pool := start(t)
	ctx := context.Background()
	_, err := pool.Exec(ctx, `
INSERT INTO book.posts (id, page_id, author_user_id, app_id, content, audience, created_at) VALUES
 (1000000001, '501', '7', '90', 'oldest', 'everyone', '2026-11-27 10:00:00+00'),
 (1000000002, '501', '7', '90', 'a "quoted" <b>&</b> \ back', 'followers', '2026-11-27 11:00:00.123456+01'),
 (1000000003, '502', '7', '90', 'another Page', 'everyone', '2026-11-27 12:00:00+00'),
 (1000000004, '501', '7', '',  E'coffee ☕ café 咖啡 🚀\nline\ttab\b\f\x01', 'only_me', '2026-11-27 13:00:00+00')`)
	if err != nil {
		t.Fatal(err)
	}
	status, body := call(t, "GET", srv.URL+"/api/v1/graph?node=page/501/posts&limit=2", "Bearer "+token, "")
	want := `{"data":[` +
		`{"id":"1000000004","page_id":"501","content":"coffee ☕ café 咖啡 🚀\nline\ttab\b\f\u0001","audience":"only_me","created_time":"2026-11-27T13:00:00Z"},` +
		`{"id":"1000000002","page_id":"501","content":"a \"quoted\" <b>&</b> \\ back","audience":"followers","created_time":"2026-11-27T10:00:00Z"}],` +
		`"paging":{"cursors":{"after":"MTAwMDAwMDAwMg","before":"MTAwMDAwMDAwNA"},` +
		`"next":"https://graph.example/api/v1/graph?after=MTAwMDAwMDAwMg&limit=2&node=page%2F501%2Fposts"}}`
	if status != http.StatusOK || body != want {
		t.Errorf("answered %d\n%s\nwant\n%s", status, body, want)
	}
	// The last page has no next link; an empty one, empty cursors and data.
	_, body = call(t, "GET", srv.URL+"/api/v1/graph?node=page/502/posts&limit=10", "Bearer "+token, "")
	if want := `"paging":{"cursors":{"after":"MTAwMDAwMDAwMw","before":"MTAwMDAwMDAwMw"}}}`; !strings.HasSuffix(body, want) {
		t.Errorf("last page %s, want it to end %s", body, want)
	}
	_, body = call(t, "GET", srv.URL+"/api/v1/graph?node=page/503/posts&limit=10", "Bearer "+token, "")
	if want := `{"data":[],"paging":{"cursors":{"after":"","before":""}}}`; body != want {
		t.Errorf("empty Page %s, want %s", body, want)
	}
}

// The post write runs CreatePost: the post and its book.post.created event,
// and answers the post's id as the gateway does.
func TestTheFloorWritesThePostAndItsEventAndAnswersItsID(t *testing.T) {
	srv, pool := start(t)
	status, body := call(t, "POST", srv.URL+"/api/v1/graph?node=page/501/posts", "Bearer "+token,
		`{"content":"Benchmark post 1: ☕","audience":"everyone"}`)
	m := regexp.MustCompile(`^\{"id":"([0-9]+)"\}$`).FindStringSubmatch(body)
	if status != http.StatusOK || m == nil {
		t.Fatalf("answered %d %s, want 200 {\"id\":\"<digits>\"}", status, body)
	}
	var author, content, data string
	err := pool.QueryRow(context.Background(), `SELECT p.author_user_id, p.content, o.data->>'postId'
		FROM book.posts p JOIN core.outbox o ON o.data->>'postId' = p.id::text
		WHERE p.id = $1 AND p.page_id = '501' AND o.type = 'book.post.created'`, m[1]).Scan(&author, &content, &data)
	if err != nil || author != "7" || content != "Benchmark post 1: ☕" || data != m[1] {
		t.Errorf("post %s: author %q, content %q, event for %q, err %v", m[1], author, content, data, err)
	}
}

// A request without the token, or with another, is refused before any
// query: the floor does not serve anonymous reads.
func TestTheFloorRefusesAnotherToken(t *testing.T) {
	srv, _ := start(t)
	for _, auth := range []string{"", "Bearer other", token} {
		if status, _ := call(t, "GET", srv.URL+"/api/v1/graph?node=page/501/posts&limit=10", auth, ""); status != http.StatusUnauthorized {
			t.Errorf("Authorization %q answered %d, want 401", auth, status)
		}
	}
}

// The floor answers a Page's posts only: any other node is refused, not
// read as if it were one.
func TestTheFloorRefusesAnyOtherNode(t *testing.T) {
	srv, _ := start(t)
	for _, node := range []string{"user/501/posts", "501/posts", "page//posts", "page/501/messages", "page/501/x/posts", "page/501/posts/x"} {
		if status, _ := call(t, "GET", srv.URL+"/api/v1/graph?limit=10&node="+node, "Bearer "+token, ""); status != http.StatusBadRequest {
			t.Errorf("node %q answered %d, want 400", node, status)
		}
	}
}

// The send runs svcchat's transaction (SendTx) on the Page's conversation
// with the recipient: the message numbered from the conversation's
// counter, its two events in the outbox copy, and the gateway's answer.
// A recipient without a conversation is refused and nothing is written.
func TestTheFloorSendsAsSvcchatsTransactionAndAnswersAsTheGateway(t *testing.T) {
	srv, pool := start(t)
	ctx := context.Background()
	if _, err := migrate.Apply(ctx, pool, "svcchat", svcchatsql.Migrations()); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, SendSchema); err != nil {
		t.Fatal(err)
	}
	var conversation int64
	err := pool.QueryRow(ctx, `INSERT INTO svcchat.conversations (page_id, user_id, holder, window_expires_at, last_message_seq)
		VALUES ('501', '42', 'svc_ai', now() + interval '1 day', 3) RETURNING id`).Scan(&conversation)
	if err != nil {
		t.Fatal(err)
	}
	status, body := call(t, "POST", srv.URL+"/api/v1/graph?node=page/501/messages", "Bearer "+token,
		`{"recipient_user_id":"42","text":"Benchmark reply 1: ☕"}`)
	m := regexp.MustCompile(`^\{"recipient_id":"42","message_id":"(m_[0-9A-Za-z]{22})","conversation_id":"([0-9]+)"\}$`).FindStringSubmatch(body)
	if status != http.StatusOK || m == nil || m[2] != strconv.FormatInt(conversation, 10) {
		t.Fatalf("answered %d %s, want 200 with the recipient, a message id and conversation %d", status, body, conversation)
	}
	var seq, events int64
	var text, app string
	err = pool.QueryRow(ctx, `SELECT m.seq, m.text, m.app_id,
		(SELECT count(*) FROM svcbench_send.outbox o WHERE o.ordering_key = 'svcchat.conversation:' || m.conversation_id)
		FROM svcchat.messages m WHERE m.page_id = '501' AND m.id = $1`, m[1]).Scan(&seq, &text, &app, &events)
	if err != nil || seq != 4 || text != "Benchmark reply 1: ☕" || app != "90" || events != 2 {
		t.Errorf("message %s: seq %d, text %q, app %q, %d events, err %v; want seq 4, the text, app 90, 2 events",
			m[1], seq, text, app, events, err)
	}

	status, _ = call(t, "POST", srv.URL+"/api/v1/graph?node=page/501/messages", "Bearer "+token,
		`{"recipient_user_id":"43","text":"to no one"}`)
	var messages int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM svcchat.messages`).Scan(&messages); err != nil {
		t.Fatal(err)
	}
	if status != http.StatusBadRequest || messages != 1 {
		t.Errorf("a send without a conversation answered %d and left %d messages, want 400 and 1", status, messages)
	}
}
