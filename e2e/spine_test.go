package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectpb "google.golang.org/grpc/reflection/grpc_reflection_v1"

	platformv1 "github.com/svcplatform/svc/gen/svc/platform/v1"
	"github.com/svcplatform/svc/gen/svc/platform/v1/platformv1connect"
	"github.com/svcplatform/svc/internal/gatewaytest"
)

// graphError is the Graph error envelope of CONTRACT §3.
type graphError struct {
	Error struct {
		Message     string `json:"message"`
		Type        string `json:"type"`
		Code        int    `json:"code"`
		Subcode     int    `json:"error_subcode"`
		FBTraceID   string `json:"fbtrace_id"`
		IsTransient bool   `json:"is_transient"`
	} `json:"error"`
}

// do sends one request and returns the response with its body read.
func do(t *testing.T, method, url string, body io.Reader, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

// wantGraphError checks status, code and subcode, and that fbtrace_id equals
// the X-Svc-Trace-Id header.
func wantGraphError(t *testing.T, res *http.Response, body []byte, status, code, subcode int) graphError {
	t.Helper()
	if res.StatusCode != status {
		t.Fatalf("status = %d, want %d; body %s", res.StatusCode, status, body)
	}
	var e graphError
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body is not the envelope: %v: %s", err, body)
	}
	if e.Error.Code != code || e.Error.Subcode != subcode {
		t.Fatalf("code/subcode = %d/%d, want %d/%d; body %s", e.Error.Code, e.Error.Subcode, code, subcode, body)
	}
	if e.Error.Message == "" || e.Error.Type == "" {
		t.Fatalf("envelope lacks message or type: %s", body)
	}
	if tr := res.Header.Get("X-Svc-Trace-Id"); tr == "" || tr != e.Error.FBTraceID {
		t.Fatalf("fbtrace_id %q does not match X-Svc-Trace-Id %q", e.Error.FBTraceID, tr)
	}
	return e
}

func TestChangelogOverEveryProtocol(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	t.Run("REST", func(t *testing.T) {
		res, body := do(t, "GET", g.URL+"/api/v1/platform/changelog", nil, nil)
		if res.StatusCode != 200 {
			t.Fatalf("status %d: %s", res.StatusCode, body)
		}
		if res.Header.Get("Svc-Api-Version") != "v1" {
			t.Errorf("Svc-Api-Version = %q, want v1", res.Header.Get("Svc-Api-Version"))
		}
		if res.Header.Get("X-Svc-Trace-Id") == "" {
			t.Error("no X-Svc-Trace-Id header")
		}
		var got struct {
			Data []struct{ Version, Date, Kind, Summary string } `json:"data"`
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Data) < 10 {
			t.Fatalf("changelog has %d entries, want the interface's history: %s", len(got.Data), body)
		}
		first := got.Data[0]
		if first.Version != "1.0.0" || first.Date != "2026-08-01" || first.Kind != "major" || !strings.Contains(first.Summary, "PKCE") {
			t.Errorf("first entry = %+v", first)
		}
		var found bool
		for _, e := range got.Data {
			found = found || (e.Version == "1.15.0" && strings.Contains(e.Summary, "handover"))
		}
		if !found {
			t.Error("1.15.0 (handover) missing from the changelog")
		}
	})

	check := func(t *testing.T, res *platformv1.GetChangelogResponse) {
		t.Helper()
		if len(res.GetData()) < 10 || res.GetData()[0].GetVersion() != "1.0.0" {
			t.Fatalf("unexpected changelog: %v", res)
		}
	}
	t.Run("Connect JSON", func(t *testing.T) {
		c := platformv1connect.NewPlatformServiceClient(http.DefaultClient, g.URL, connect.WithProtoJSON())
		res, err := c.GetChangelog(ctx, connect.NewRequest(&platformv1.GetChangelogRequest{}))
		if err != nil {
			t.Fatal(err)
		}
		check(t, res.Msg)
	})
	t.Run("Connect GET", func(t *testing.T) {
		c := platformv1connect.NewPlatformServiceClient(http.DefaultClient, g.URL, connect.WithHTTPGet())
		res, err := c.GetChangelog(ctx, connect.NewRequest(&platformv1.GetChangelogRequest{}))
		if err != nil {
			t.Fatal(err)
		}
		check(t, res.Msg)
	})
	t.Run("gRPC-Web", func(t *testing.T) {
		c := platformv1connect.NewPlatformServiceClient(http.DefaultClient, g.URL, connect.WithGRPCWeb())
		res, err := c.GetChangelog(ctx, connect.NewRequest(&platformv1.GetChangelogRequest{}))
		if err != nil {
			t.Fatal(err)
		}
		check(t, res.Msg)
	})
	t.Run("Connect gRPC over h2c", func(t *testing.T) {
		c := platformv1connect.NewPlatformServiceClient(h2cClient(), g.URL, connect.WithGRPC())
		res, err := c.GetChangelog(ctx, connect.NewRequest(&platformv1.GetChangelogRequest{}))
		if err != nil {
			t.Fatal(err)
		}
		check(t, res.Msg)
	})

	conn, err := grpc.NewClient(g.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	t.Run("grpc-go", func(t *testing.T) {
		res, err := platformv1.NewPlatformServiceClient(conn).GetChangelog(ctx, &platformv1.GetChangelogRequest{})
		if err != nil {
			t.Fatal(err)
		}
		check(t, res)
	})
	t.Run("gRPC health", func(t *testing.T) {
		res, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if res.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("health = %v", res.GetStatus())
		}
	})
	t.Run("gRPC reflection", func(t *testing.T) {
		stream, err := reflectpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := stream.Send(&reflectpb.ServerReflectionRequest{
			MessageRequest: &reflectpb.ServerReflectionRequest_ListServices{},
		}); err != nil {
			t.Fatal(err)
		}
		res, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range res.GetListServicesResponse().GetService() {
			names = append(names, s.GetName())
		}
		if !strings.Contains(strings.Join(names, " "), "svc.platform.v1.PlatformService") {
			t.Fatalf("reflection lists %v", names)
		}
		if err := stream.Send(&reflectpb.ServerReflectionRequest{
			MessageRequest: &reflectpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "svc.platform.v1.PlatformService"},
		}); err != nil {
			t.Fatal(err)
		}
		res, err = stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if len(res.GetFileDescriptorResponse().GetFileDescriptorProto()) == 0 {
			t.Fatalf("no file descriptor for the platform service: %v", res)
		}
	})
	t.Run("changelog page", func(t *testing.T) {
		res, body := do(t, "GET", g.URL+"/developers/changelog", nil, nil)
		if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("status %d, type %q", res.StatusCode, res.Header.Get("Content-Type"))
		}
		if !bytes.Contains(body, []byte("1.15.0")) || !bytes.Contains(body, []byte("phase 3: handover node")) || !bytes.Contains(body, []byte("<table>")) {
			t.Fatalf("page lacks the history: %s", body)
		}
		// Rendered like every other page: no scripts, never framed.
		if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || res.Header.Get("X-Frame-Options") != "DENY" {
			t.Fatalf("security headers: CSP %q, X-Frame-Options %q", csp, res.Header.Get("X-Frame-Options"))
		}
	})
	t.Run("metrics", func(t *testing.T) {
		res, body := scrape(t, g)
		if res.StatusCode != 200 || !bytes.Contains(body, []byte("svc_http_requests_total")) {
			t.Fatalf("status %d, body lacks request counter", res.StatusCode)
		}
	})
	t.Run("readyz", func(t *testing.T) {
		res, _ := do(t, "GET", g.URL+"/readyz", nil, nil)
		if res.StatusCode != 200 {
			t.Fatalf("readyz = %d", res.StatusCode)
		}
	})
}

func TestErrorsUseTheEnvelope(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	big := strings.Repeat("x", 1<<20+1)
	cases := []struct {
		name                  string
		method, path          string
		body                  string
		header                map[string]string
		status, code, subcode int
	}{
		{"unsupported major v2 is refused with 2635", "GET", "/api/v2/platform/changelog", "", nil, 404, 2635, 0},
		{"v0 is refused with 2635", "GET", "/api/v0/graph?node=me", "", nil, 404, 2635, 0},
		{"v10 is refused with 2635", "GET", "/api/v10/platform/changelog", "", nil, 404, 2635, 0},
		{"unknown path answers 2500", "GET", "/api/v1/no/such/thing", "", nil, 404, 2500, 0},
		{"oversized body answers 413", "POST", "/api/v1/platform/changelog", big, map[string]string{"Content-Type": "application/json"}, 413, 100, 0},
		{"wrong method answers an envelope", "DELETE", "/api/v1/platform/changelog", "", nil, 0, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, body := do(t, tc.method, g.URL+tc.path, strings.NewReader(tc.body), tc.header)
			if tc.status == 0 {
				// Any refusal, as long as it is the envelope and not a 5xx.
				if res.StatusCode < 400 || res.StatusCode >= 500 {
					t.Fatalf("status %d: %s", res.StatusCode, body)
				}
				var e graphError
				if err := json.Unmarshal(body, &e); err != nil || e.Error.Code == 0 {
					t.Fatalf("not an envelope: %s", body)
				}
				return
			}
			wantGraphError(t, res, body, tc.status, tc.code, tc.subcode)
		})
	}
	t.Run("oversized chunked body answers 413", func(t *testing.T) {
		// No Content-Length: the limit trips while reading.
		req, _ := http.NewRequest("POST", g.URL+"/api/v1/platform/changelog", io.MultiReader(strings.NewReader(big)))
		req.ContentLength = -1
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != 413 && res.StatusCode != 405 {
			t.Fatalf("status %d: %s", res.StatusCode, body)
		}
	})
	t.Run("malformed Connect JSON is invalid_argument", func(t *testing.T) {
		res, body := do(t, "POST", g.URL+"/svc.platform.v1.PlatformService/GetChangelog", strings.NewReader("{not json"),
			map[string]string{"Content-Type": "application/json", "Connect-Protocol-Version": "1"})
		if res.StatusCode != 400 {
			t.Fatalf("status %d: %s", res.StatusCode, body)
		}
		var ce struct{ Code string }
		if err := json.Unmarshal(body, &ce); err != nil || ce.Code != "invalid_argument" {
			t.Fatalf("not a Connect invalid_argument error: %s", body)
		}
	})
	t.Run("unknown field in Connect JSON is refused", func(t *testing.T) {
		res, body := do(t, "POST", g.URL+"/svc.platform.v1.PlatformService/GetChangelog", strings.NewReader(`{"bogus":1}`),
			map[string]string{"Content-Type": "application/json", "Connect-Protocol-Version": "1"})
		if res.StatusCode != 400 || !bytes.Contains(body, []byte("bogus")) {
			t.Fatalf("status %d: %s", res.StatusCode, body)
		}
	})
	t.Run("wrong content type to Connect is refused", func(t *testing.T) {
		res, body := do(t, "POST", g.URL+"/svc.platform.v1.PlatformService/GetChangelog", strings.NewReader(`{}`),
			map[string]string{"Content-Type": "text/plain"})
		if res.StatusCode < 400 || res.StatusCode >= 500 {
			t.Fatalf("status %d: %s", res.StatusCode, body)
		}
	})
	t.Run("the gateway is still healthy", func(t *testing.T) {
		res, _ := do(t, "GET", g.URL+"/healthz", nil, nil)
		if res.StatusCode != 200 {
			t.Fatalf("healthz = %d after bad input", res.StatusCode)
		}
	})
}

// h2cClient speaks HTTP/2 over cleartext, as gRPC clients do.
func h2cClient() *http.Client {
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: tr}
}

// signInAt opens a first-party session on the gateway at base and returns
// its token; signIn does it for a seeded user of a graphWorld.
func signInAt(t *testing.T, base, username, password string) string {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"username": username, "password": password})
	res, body := do(t, "POST", base+"/api/mobile/auth/session", strings.NewReader(string(b)),
		map[string]string{"Content-Type": "application/json"})
	s := decode[struct {
		SessionToken string `json:"sessionToken"`
	}](t, body)
	if res.StatusCode != 200 || s.SessionToken == "" {
		t.Fatalf("sign in %s: %d %s", username, res.StatusCode, body)
	}
	return s.SessionToken
}
