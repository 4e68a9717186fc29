package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/svcplatform/svc/gateway/internal/webhook"
)

// Bounds of gateway listen.
const (
	// listenForwardTimeout bounds one request to the local receiver: the
	// platform waits for the acknowledgement within its attempt timeout
	// (10 s), so the local answer must come well before.
	listenForwardTimeout = 8 * time.Second
	// listenParallel bounds the deliveries forwarded at once.
	listenParallel = 8
	// listenMaxEvent bounds one message of the stream.
	listenMaxEvent = 8 << 20
	// listenMaxBackoff is the longest wait before reconnecting.
	listenMaxBackoff = 30 * time.Second
)

// refusedError is the platform refusing the stream: reconnecting would not
// help.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return e.msg }

// Listen is `gateway listen --base-url URL --app <app id> --token <token>
// --forward-to <local URL> [--events <types>]`: an app's webhook
// deliveries on a developer's machine without a tunnel (CONTRACT §20). It
// holds an outbound stream to the platform (webhook.ListenPath), forwards
// each delivery, byte for byte and with its signatures, to the local URL,
// prints one line per delivery (time, event type, delivery id, local
// status), and acknowledges it with the local status (webhook.ListenAckPath):
// a delivery not acknowledged with a 2xx is delivered again. It reconnects
// when the stream ends, and stops on a refusal (401, 403, 404) or Ctrl-C.
func Listen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("gateway listen", flag.ContinueOnError)
	flags.SetOutput(stderr)
	base := flags.String("base-url", "http://127.0.0.1:8080", "the platform's public URL")
	app := flags.String("app", "", "id of the app whose deliveries to receive")
	token := flags.String("token", "", "the app's key, its client_credentials token, or the token of a team Admin or Developer issued to the app (default $SVC_TOKEN)")
	forward := flags.String("forward-to", "", "local URL each delivery is POSTed to, e.g. http://localhost:3000/hook")
	events := flags.String("events", "", "comma-separated event types to receive (default: every event the app gets)")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *token == "" {
		*token = os.Getenv("SVC_TOKEN")
	}
	if *app == "" || *forward == "" || *token == "" || flags.NArg() > 0 {
		flags.Usage()
		return errors.New("listen: --app, --forward-to and --token (or SVC_TOKEN) are required")
	}
	if u, err := url.Parse(*forward); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("listen: --forward-to %q is not an http(s) URL", *forward)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	l := &listenClient{base: strings.TrimSuffix(*base, "/"), app: *app, token: *token, forward: *forward, events: *events,
		stdout: stdout, stderr: stderr, local: &http.Client{Timeout: listenForwardTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		acks: &http.Client{Timeout: 10 * time.Second}}
	backoff := time.Second
	for {
		connected, err := l.once(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var refused *refusedError
		if errors.As(err, &refused) {
			return fmt.Errorf("listen: %w", err)
		}
		if connected {
			backoff = time.Second
		}
		if err != nil {
			l.say("stream ended (%v); reconnecting in %s", err, backoff)
		} else {
			l.say("stream closed by the platform; reconnecting")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		if err != nil {
			backoff = min(2*backoff, listenMaxBackoff)
		}
	}
}

type listenClient struct {
	base, app, token, forward, events string
	stdout, stderr                    io.Writer
	local, acks                       *http.Client
	mu                                sync.Mutex // one line at a time
}

func (l *listenClient) say(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.stderr, "gateway listen: "+format+"\n", args...)
}

// once holds one stream until it ends; connected says it was accepted.
func (l *listenClient) once(ctx context.Context) (connected bool, err error) {
	q := url.Values{"app_id": {l.app}}
	if l.events != "" {
		q.Set("events", l.events)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.base+webhook.ListenPath+"?"+q.Encode(), nil)
	if err != nil {
		return false, &refusedError{fmt.Sprintf("--base-url %q: %v", l.base, err)}
	}
	req.Header.Set("Authorization", "Bearer "+l.token)
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		msg := platformError(res)
		switch res.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusBadRequest:
			return false, &refusedError{msg}
		}
		return false, errors.New(msg)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, listenParallel)
	var listener string
	r := bufio.NewReaderSize(res.Body, 64<<10)
	for {
		event, data, err := readEvent(r)
		if err != nil {
			return true, err
		}
		switch event {
		case "ready":
			var ready webhook.ListenReady
			_ = json.Unmarshal(data, &ready)
			listener = ready.ListenerID
			l.say("ready: forwarding the deliveries of app %s to %s (listener %s; Ctrl-C to stop)", l.app, l.forward, listener)
		case "close":
			return true, nil
		case "delivery":
			var d webhook.ListenDelivery
			if err := json.Unmarshal(data, &d); err != nil {
				l.say("a delivery could not be read: %v", err)
				continue
			}
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return true, nil
			}
			wg.Go(func() {
				defer func() { <-slots }()
				l.deliver(ctx, listener, d)
			})
		}
	}
}

// readEvent reads one Server-Sent Event: its name and data. Comments
// (pings) are skipped.
func readEvent(r *bufio.Reader) (event string, data []byte, err error) {
	var buf bytes.Buffer
	size := 0
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return "", nil, err
		}
		if size += len(line); size > listenMaxEvent {
			return "", nil, errors.New("a message of the stream is too large")
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if event != "" || buf.Len() > 0 {
				return event, buf.Bytes(), nil
			}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			if buf.Len() > 0 {
				buf.WriteByte('\n')
			}
			buf.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
}

// deliver forwards one delivery to the local URL, prints its line and
// acknowledges it.
func (l *listenClient) deliver(ctx context.Context, listener string, d webhook.ListenDelivery) {
	ack := webhook.ListenAck{ListenerID: listener, Token: d.Token}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.forward, strings.NewReader(d.Body))
	if err == nil {
		for k, v := range d.Headers {
			req.Header[k] = []string{v} // as sent: webhook-* stay lower case
		}
		var res *http.Response
		if res, err = l.local.Do(req); err == nil {
			excerpt, _ := io.ReadAll(io.LimitReader(res.Body, 1024))
			_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
			res.Body.Close()
			ack.StatusCode, ack.ResponseExcerpt = res.StatusCode, string(excerpt)
		}
	}
	status := fmt.Sprint(ack.StatusCode)
	if err != nil {
		ack.Error = err.Error()
		var ue *url.Error
		if errors.As(err, &ue) {
			ack.Error = ue.Err.Error()
		}
		status = "error: " + ack.Error
	}
	l.mu.Lock()
	fmt.Fprintf(l.stdout, "%s  %s  %s  -> %s\n", time.Now().Format("2006-01-02 15:04:05"), d.EventType, d.DeliveryID, status)
	l.mu.Unlock()
	if ctx.Err() != nil {
		return // stopping: unacknowledged, so delivered again
	}
	body, _ := json.Marshal(ack)
	areq, _ := http.NewRequestWithContext(ctx, http.MethodPost,
		l.base+webhook.ListenAckPath+"?"+url.Values{"app_id": {l.app}}.Encode(), bytes.NewReader(body))
	areq.Header.Set("Authorization", "Bearer "+l.token)
	areq.Header.Set("Content-Type", "application/json")
	res, err := l.acks.Do(areq)
	if err != nil {
		l.say("delivery %s not acknowledged (%v): it will be delivered again", d.DeliveryID, err)
		return
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		l.say("delivery %s not acknowledged (%s): it will be delivered again", d.DeliveryID, platformError(res))
	}
}

// platformError renders an error answer of the platform: its status and
// the Graph error's message.
func platformError(res *http.Response) string {
	body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	msg := strings.TrimSpace(string(body))
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		msg = e.Error.Message
	}
	return fmt.Sprintf("the platform answered HTTP %d: %s", res.StatusCode, msg)
}
