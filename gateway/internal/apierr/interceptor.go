package apierr

import (
	"context"
	"errors"
	"log/slog"

	"connectrpc.com/connect"
)

// Interceptor converts errors returned by compiled-in Connect handlers into
// Connect errors carrying a GraphError detail, so that every protocol sees
// the same numbers. Handlers just return *Error values.
func Interceptor() connect.Interceptor { return interceptor{} }

type interceptor struct{}

func (interceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		res, err := next(ctx, req)
		return res, toConnect(ctx, err)
	}
}

func (interceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (interceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		return toConnect(ctx, next(ctx, conn))
	}
}

func toConnect(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		return err
	}
	e := From(err)
	if e.HTTPStatus >= 500 {
		slog.ErrorContext(ctx, "rpc failed", "code", e.Code, "error", e.Error())
	}
	return ToConnect(e)
}
