package sdk

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/svcplatform/svc/internal/plugin/pluginrt"
)

// UnaryFunc handles one call of a unary method.
type UnaryFunc[Req, Res proto.Message] func(ctx context.Context, call *Call, req Req) (Res, error)

// StreamFunc handles one call of a server-streaming method: it sends each
// message with send and returns when the stream is complete. An error
// returned after some messages ends the stream with that error.
type StreamFunc[Req, Res proto.Message] func(ctx context.Context, call *Call, req Req, send func(Res) error) error

// Handle registers fn as the handler of the unary method md, e.g.
// bookv1.File_svc_book_v1_book_proto.Services().ByName("BookService").Methods().ByName("CreatePost").
// It is the one way to register a unary handler; HandleStream is the one
// for a server-streaming method.
// It panics when md is streaming or its message types are not Req and Res:
// a plugin with a wrong registration must not start.
func Handle[Req, Res proto.Message](p *Plugin, md protoreflect.MethodDescriptor, fn UnaryFunc[Req, Res]) {
	if md.IsStreamingClient() || md.IsStreamingServer() {
		panic(fmt.Sprintf("sdk: %s is a streaming method; register it with HandleStream", md.FullName()))
	}
	reqType := checkTypes[Req, Res](md)
	p.rt().Register(md, &pluginrt.Method{Unary: func(ctx context.Context, call *pluginrt.Call, in []byte) ([]byte, error) {
		req := reqType.New().Interface().(Req)
		if err := proto.Unmarshal(in, req); err != nil {
			return nil, Invalid("", "The request could not be decoded: %v.", err)
		}
		defer call.Answered()
		res, err := fn(ctx, (*Call)(call), req)
		if err != nil {
			return nil, err
		}
		out, err := pluginrt.EncodeAnswer(res)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", md.Output().FullName(), err)
		}
		return out, nil
	}})
}

// HandleStream registers fn as the handler of the server-streaming method md.
func HandleStream[Req, Res proto.Message](p *Plugin, md protoreflect.MethodDescriptor, fn StreamFunc[Req, Res]) {
	if md.IsStreamingClient() || !md.IsStreamingServer() {
		panic(fmt.Sprintf("sdk: %s is not a server-streaming method", md.FullName()))
	}
	reqType := checkTypes[Req, Res](md)
	p.rt().Register(md, &pluginrt.Method{Stream: func(ctx context.Context, call *pluginrt.Call, in []byte, send func([]byte) error) error {
		req := reqType.New().Interface().(Req)
		if err := proto.Unmarshal(in, req); err != nil {
			return Invalid("", "The request could not be decoded: %v.", err)
		}
		defer call.Answered()
		return fn(ctx, (*Call)(call), req, func(res Res) error {
			out, err := pluginrt.EncodeAnswer(res)
			if err != nil {
				return fmt.Errorf("encode %s: %w", md.Output().FullName(), err)
			}
			return send(out)
		})
	}})
}

// checkTypes panics unless Req and Res are md's message types, and returns
// Req's type for decoding.
func checkTypes[Req, Res proto.Message](md protoreflect.MethodDescriptor) protoreflect.MessageType {
	var req Req
	var res Res
	reqType, resType := req.ProtoReflect().Type(), res.ProtoReflect().Type()
	if got, want := reqType.Descriptor().FullName(), md.Input().FullName(); got != want {
		panic(fmt.Sprintf("sdk: %s takes %s, not %s", md.FullName(), want, got))
	}
	if got, want := resType.Descriptor().FullName(), md.Output().FullName(); got != want {
		panic(fmt.Sprintf("sdk: %s returns %s, not %s", md.FullName(), want, got))
	}
	return reqType
}
