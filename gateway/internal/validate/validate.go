package validate

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"buf.build/go/protovalidate"
	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/svcplatform/svc/gateway/internal/apierr"
)

var validator = sync.OnceValues(func() (protovalidate.Validator, error) {
	return protovalidate.New()
})

// Check validates msg. It returns nil, an *apierr.Error (code 100) naming
// the fields that break their rules, or an internal error when the rules
// themselves cannot be compiled.
func Check(msg proto.Message) error {
	v, err := validator()
	if err != nil {
		return apierr.Internal(fmt.Errorf("protovalidate: %w", err))
	}
	err = v.Validate(msg)
	if err == nil {
		return nil
	}
	verr, ok := err.(*protovalidate.ValidationError)
	if !ok || len(verr.Violations) == 0 {
		return apierr.Internal(fmt.Errorf("validate %s: %w", msg.ProtoReflect().Descriptor().FullName(), err))
	}
	parts := make([]string, 0, len(verr.Violations))
	for _, violation := range verr.Violations {
		parts = append(parts, fmt.Sprintf("%s: %s", fieldPath(violation), violation.Proto.GetMessage()))
	}
	first := fieldPath(verr.Violations[0])
	return apierr.Invalid(first, "Invalid parameter: %s", strings.Join(parts, "; "))
}

func fieldPath(v *protovalidate.Violation) string {
	if p := protovalidate.FieldPathString(v.Proto.GetField()); p != "" {
		return p
	}
	return "(message)"
}

// Interceptor validates the request of every unary and server-streaming
// call before the handler runs.
func Interceptor() connect.Interceptor { return interceptor{} }

type interceptor struct{}

func (interceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if msg, ok := req.Any().(proto.Message); ok {
			if err := Check(msg); err != nil {
				return nil, apierr.ToConnect(apierr.From(err))
			}
		}
		return next(ctx, req)
	}
}

func (interceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (interceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		return next(ctx, &validatingConn{StreamingHandlerConn: conn})
	}
}

type validatingConn struct{ connect.StreamingHandlerConn }

func (c *validatingConn) Receive(m any) error {
	if err := c.StreamingHandlerConn.Receive(m); err != nil {
		return err
	}
	if msg, ok := m.(proto.Message); ok {
		if err := Check(msg); err != nil {
			return apierr.ToConnect(apierr.From(err))
		}
	}
	return nil
}
