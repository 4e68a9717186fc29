package protocol

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// The protocol's own calls over the fast lane's framing: an InvokeRequest
// naming one of these procedures carries the call's request message in
// request, and its answer carries the response message in response (or an
// Error). The names are the svc.plugin.v1 services' gRPC method names, so a
// product procedure can never take one.
const (
	// ProcDescribe is Plugin.Describe, served on the plugin's lane.
	ProcDescribe = "/svc.plugin.v1.Plugin/Describe"
	// ProcHealth is Plugin.Health, served on the plugin's lane.
	ProcHealth = "/svc.plugin.v1.Plugin/Health"

	// The Host service's calls, served by the gateway on the socket named
	// in DescribeRequest.host_socket.
	ProcHostCall           = "/svc.plugin.v1.Host/Call"
	ProcHostPageAccess     = "/svc.plugin.v1.Host/PageAccess"
	ProcHostBusinessAccess = "/svc.plugin.v1.Host/BusinessAccess"
	ProcHostAppInfo        = "/svc.plugin.v1.Host/AppInfo"
	ProcHostUserInfo       = "/svc.plugin.v1.Host/UserInfo"
	// ProcHostExportSpans hands the gateway the plugin's finished spans: an
	// OTLP TracesData, answered with an empty message. Not a method of the
	// Host service's proto: it carries OTLP's own message.
	ProcHostExportSpans = "/svc.plugin.v1.Host/ExportSpans"
)

// HostSocket is the file name of the socket on which the gateway serves the
// Host service, in the plugin's private folder.
const HostSocket = "host.sock"

// ControlAnswer wraps a protocol call's response message, or the failure to
// produce it, into the lane's answer.
func ControlAnswer(res proto.Message, err error) *pluginv1.InvokeResponse {
	if err != nil {
		return &pluginv1.InvokeResponse{Error: ControlError(err)}
	}
	b, err := proto.Marshal(res)
	if err != nil {
		return &pluginv1.InvokeResponse{Error: ControlError(fmt.Errorf("encode %T: %w", res, err))}
	}
	return &pluginv1.InvokeResponse{Response: b}
}

// ControlError is the wire form of a protocol call's failure: a Connect
// code (Unavailable when err carries none) and the message.
func ControlError(err error) *pluginv1.Error {
	code := uint32(14) // unavailable
	var c interface{ ConnectCode() uint32 }
	if errors.As(err, &c) {
		code = c.ConnectCode()
	}
	return &pluginv1.Error{ConnectCode: code, Message: err.Error()}
}

// ControlFault is a protocol call the other side refused or could not run:
// Code is its Connect code (protocol.ControlError).
type ControlFault struct {
	Procedure string
	Code      uint32
	Message   string
}

func (f *ControlFault) Error() string { return f.Procedure + ": " + f.Message }

// ConnectCode is f's Connect code.
func (f *ControlFault) ConnectCode() uint32 { return f.Code }

// Invoker sends one unary call over the lane (LaneClient.Invoke).
type Invoker interface {
	Invoke(ctx context.Context, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error)
}

// CallControl runs protocol call procedure with req on c and decodes its
// answer into res. A refusal is a *ControlFault; a transport failure is
// the lane's error.
func CallControl(ctx context.Context, c Invoker, procedure string, req, res proto.Message) error {
	in, err := proto.Marshal(req)
	if err != nil {
		return fmt.Errorf("%s: encode request: %w", procedure, err)
	}
	ireq := &pluginv1.InvokeRequest{Procedure: procedure, Request: in}
	if d, ok := ctx.Deadline(); ok {
		ireq.DeadlineUnixNano = d.UnixNano()
	}
	resp, err := c.Invoke(ctx, ireq)
	if err != nil {
		return err
	}
	if e := resp.GetError(); e != nil {
		return &ControlFault{Procedure: procedure, Code: e.GetConnectCode(), Message: e.GetMessage()}
	}
	if err := proto.Unmarshal(resp.GetResponse(), res); err != nil {
		return fmt.Errorf("%s: decode response: %w", procedure, err)
	}
	return nil
}
