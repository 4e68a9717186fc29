// Package browsertest drives the system's Chromium, headless, from Go tests,
// so that the web pages the gateway serves (the console, the emulated chat
// app, the login and consent pages) are tested as a person uses them: real
// HTML, real JavaScript, real cookies.
//
// The browser is Debian's chromium, installed by `make test` (the `browser`
// target); no tool downloads a browser of its own. Each test gets a fresh
// profile folder, and every page it photographs is saved as a PNG in the
// test's artifact directory (`go test -artifacts`; `make test` keeps them
// under .tmp/test-output).
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Path names the Chromium executable: $SVC_CHROMIUM when set, else the
// first of Debian's names found on PATH. It is empty when there is none.
func Path() string {
	if p := os.Getenv("SVC_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// flags are the headless settings that work on machines with no display, no
// GPU and no network beyond loopback.
func flags(profile string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
	}
}

// Browser is one headless Chromium tab for one test.
type Browser struct {
	t   testing.TB
	ctx context.Context

	mu    sync.Mutex
	shots int
	dir   string
}

// New starts Chromium for t and closes it when t ends. A test that needs a
// browser fails, rather than skips, when there is none: `make test` installs
// it, and a skipped browser test would prove nothing.
func New(t testing.TB) *Browser {
	t.Helper()
	exe := Path()
	if exe == "" {
		t.Fatal("no Chromium found: run `make browser` (installs Debian's chromium) or set SVC_CHROMIUM")
	}
	opts := append(flags(t.TempDir()), chromedp.ExecPath(exe))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	// The first call starts the browser, with no timeout (a timeout on it
	// would stop the whole browser when it lapses); a broken install fails
	// here with its own message.
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("start Chromium %s: %v", exe, err)
	}
	t.Cleanup(func() { cancel(); cancelAlloc() })
	b := &Browser{t: t, ctx: ctx}
	if a, ok := t.(interface{ ArtifactDir() string }); ok {
		b.dir = a.ArtifactDir()
	} else {
		b.dir = t.TempDir()
	}
	return b
}

// Context is the tab's context, for chromedp calls a test makes itself.
func (b *Browser) Context() context.Context { return b.ctx }

// Do performs the steps, named step, within 30 seconds. On failure it
// photographs the page as it was and fails the test with the step's name.
func (b *Browser) Do(step string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	Get(b, step, chromedp.Steps(steps...))
}

// Load performs steps that load a new page (a click on a link or on a plain
// form's button) and waits, within 30 seconds, until that page has loaded,
// so that the next step does not look at the page being left. It answers
// the HTTP status of the loaded document and fails the test as Do does.
func (b *Browser) Load(step string, steps ...chromedp.Action[chromedp.Void]) int64 {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	res, err := chromedp.RunResponse(ctx, steps...)
	if err == nil && res == nil {
		err = fmt.Errorf("no page was loaded")
	}
	if err != nil {
		b.Shot("failed-" + step)
		b.t.Fatalf("%s: %v%s", step, err, b.alerts())
	}
	return res.Status
}

// Try performs the steps within d and returns the error instead of failing
// the test, for steps whose failure is the point of the test (waiting for
// something that must not appear, for one).
func (b *Browser) Try(d time.Duration, steps ...chromedp.Action[chromedp.Void]) error {
	_, err := run(b, d, chromedp.Steps(steps...))
	return err
}

// Get performs one action that answers a value (a text, a location, the
// result of a script) within 30 seconds, failing the test as Do does.
func Get[T any](b *Browser, step string, a chromedp.Action[T]) T {
	b.t.Helper()
	v, err := run(b, 30*time.Second, a)
	if err != nil {
		b.Shot("failed-" + step)
		b.t.Fatalf("%s: %v%s", step, err, b.alerts())
	}
	return v
}

// alerts answers the messages the page shows as alerts (a refused form's
// error, say), for a failed step's report: a screenshot is not at hand
// where CI runs, the refusal's text is.
func (b *Browser) alerts() string {
	texts, err := run(b, 5*time.Second, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('[role=alert]')].map((e) => (e.dataset.code ? 'code ' + e.dataset.code + ': ' : '') + e.textContent)`))
	if err != nil || len(texts) == 0 {
		return ""
	}
	return "; the page shows: " + strings.Join(texts, " | ")
}

func run[T any](b *Browser, d time.Duration, a chromedp.Action[T]) (T, error) {
	ctx, cancel := context.WithTimeout(b.ctx, d)
	defer cancel()
	return chromedp.Run(ctx, a)
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Shot saves a full-page PNG of the current page, numbered in the order
// taken, logs where it is and answers its path. It never fails the test: a
// picture is evidence, not a check.
func (b *Browser) Shot(name string) string {
	b.t.Helper()
	b.mu.Lock()
	b.shots++
	n := b.shots
	b.mu.Unlock()
	// Quality 100 makes chromedp ask for PNG rather than JPEG.
	png, err := run(b, 10*time.Second, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return ""
	}
	path := filepath.Join(b.dir, fmt.Sprintf("%02d-%s.png", n, unsafeName.ReplaceAllString(name, "_")))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return ""
	}
	b.t.Logf("screenshot: %s", path)
	return path
}

// WaitText waits until an element matching the CSS selector contains text,
// for pages that change on their own (a reply arriving, a poll refreshing).
func WaitText(css, text string) chromedp.Action[chromedp.Void] {
	found := chromedp.PollFunction[bool](
		`(sel, text) => [...document.querySelectorAll(sel)].some((e) => e.textContent.includes(text))`,
		chromedp.WithPollingArgs(css, text), chromedp.WithPollingInterval(100*time.Millisecond))
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		if _, err := found(ctx, t); err != nil {
			return chromedp.Void{}, fmt.Errorf("waiting for %q in %s: %w", text, css, err)
		}
		return chromedp.Void{}, nil
	}
}
