package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	bookv1 "github.com/svcplatform/svc/gen/svc/book/v1"
	errorsv1 "github.com/svcplatform/svc/gen/svc/errors/v1"
	"github.com/svcplatform/svc/internal/gatewaytest"
)

// grpcurlBinary is the grpcurl make test installs (SVC_GRPCURL), or the
// one in the checkout's tool folder.
func grpcurlBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SVC_GRPCURL"); p != "" {
		return p
	}
	p, err := filepath.Abs("../.tools/bin/grpcurl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("grpcurl is missing (make tools installs it): %v", err)
	}
	return p
}

// A refusal on a plugin's gRPC method carries its gRPC status with the
// Graph error as a detail (CONTRACT §20), never Internal: for a missing
// token, a bad token, a missing scope and invalid input, through grpcurl
// (a user's first gRPC client, with server reflection) and a generated Go
// client. The route's codec once refused to marshal the status details, so
// every refusal reached gRPC callers as "Internal: cannot marshal".
func TestGRPCRefusalsCarryTheirStatusAndTheGraphError(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := g.Credentials(t)
	noScope := g.UserToken(t, "owner", "public_profile")
	writer := g.UserToken(t, "owner", "pages:read", "pages:manage")
	cases := []struct {
		rule, token, method, body string
		code                      codes.Code
		graphCode                 int32
	}{
		{"no token", "", "ListPosts", `{"page_id":"` + c.Page.ID + `"}`, codes.Unauthenticated, 104},
		{"a bad token", "svc_not_a_token", "ListPosts", `{"page_id":"` + c.Page.ID + `"}`, codes.Unauthenticated, 190},
		{"a missing scope", noScope, "ListPosts", `{"page_id":"` + c.Page.ID + `"}`, codes.PermissionDenied, 10},
		{"invalid input", writer, "CreatePost", `{"page_id":"` + c.Page.ID + `","content":""}`, codes.InvalidArgument, 100},
	}
	grpcurl := grpcurlBinary(t)
	for _, tc := range cases {
		t.Run("grpcurl, "+tc.rule, func(t *testing.T) {
			args := []string{"-plaintext", "-format-error", "-d", tc.body}
			if tc.token != "" {
				args = append(args, "-H", "authorization: Bearer "+tc.token)
			}
			args = append(args, g.Addr, "svc.book.v1.BookService/"+tc.method)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, grpcurl, args...).CombinedOutput()
			if err == nil {
				t.Fatalf("grpcurl succeeded: %s", out)
			}
			text := string(out)
			if !strings.Contains(text, `"code": `+strconv.Itoa(int(tc.code))) || strings.Contains(text, "marshal") {
				t.Errorf("grpcurl answered, want code %d (%s):\n%s", tc.code, tc.code, text)
			}
			if !strings.Contains(text, "svc.errors.v1.GraphError") || !strings.Contains(text, `"code": `+strconv.Itoa(int(tc.graphCode))) {
				t.Errorf("grpcurl shows no Graph error with code %d:\n%s", tc.graphCode, text)
			}
		})
	}

	conn, err := grpc.NewClient(g.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, tc := range cases {
		t.Run("grpc-go client, "+tc.rule, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if tc.token != "" {
				ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tc.token)
			}
			// As a generated client calls: the method's full name and its
			// messages (the platform publishes Connect clients; gRPC stubs
			// are a partner's own to generate).
			if tc.method == "ListPosts" {
				err = conn.Invoke(ctx, "/svc.book.v1.BookService/ListPosts", &bookv1.ListPostsRequest{PageId: c.Page.ID}, new(bookv1.ListPostsResponse))
			} else {
				err = conn.Invoke(ctx, "/svc.book.v1.BookService/CreatePost", &bookv1.CreatePostRequest{PageId: c.Page.ID}, new(bookv1.CreatePostResponse))
			}
			st := status.Convert(err)
			if st.Code() != tc.code {
				t.Fatalf("status %s (%q), want %s", st.Code(), st.Message(), tc.code)
			}
			var graph *errorsv1.GraphError
			for _, d := range st.Details() {
				if ge, ok := d.(*errorsv1.GraphError); ok {
					graph = ge
				}
			}
			if graph == nil || graph.GetCode() != tc.graphCode {
				t.Fatalf("details %v, want a GraphError with code %d", st.Details(), tc.graphCode)
			}
		})
	}
}
