package browsertest_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/svcplatform/svc/internal/browsertest"
)

// A form submitted in the browser reaches the server with what was typed,
// and the page the server answers is what the test reads back.
func TestFormSubmissionRoundTripsThroughChromium(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><form method="post" action="/hello"><input id="name" name="name"><button id="go">Go</button></form>`)
	})
	mux.HandleFunc("POST /hello", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><p id="greeting">hello, %s</p>`, strings.ToUpper(r.PostFormValue("name")))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	b := browsertest.New(t)
	b.Do("fill the form",
		chromedp.Navigate(srv.URL),
		chromedp.SendKeys(chromedp.ID("name"), "ada"),
		chromedp.Click(chromedp.ID("go")),
	)
	greeting := browsertest.Get(b, "read the answer", chromedp.Text(chromedp.ID("greeting")))
	if greeting != "hello, ADA" {
		t.Fatalf("greeting = %q, want %q", greeting, "hello, ADA")
	}
	path := b.Shot("greeting")
	if info, err := os.Stat(path); err != nil || info.Size() == 0 {
		t.Fatalf("screenshot %q not written: %v", path, err)
	}
	png, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(png), "\x89PNG") {
		t.Fatalf("screenshot is not a PNG")
	}
}
