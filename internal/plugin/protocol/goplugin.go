package protocol

import (
	"context"
	"errors"
	"fmt"
	"math"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// GoPlugin is the go-plugin Plugin that carries the svc.plugin.v1 protocol.
// The plugin process sets Serve; the gateway sets Host.
type GoPlugin struct {
	goplugin.NetRPCUnsupportedPlugin

	// Serve registers the plugin's services on the plugin process's gRPC
	// server. broker reaches the gateway's Host service (see
	// DescribeRequest.host_broker_id).
	Serve func(broker *goplugin.GRPCBroker, s *grpc.Server) error

	// Host is served to the plugin through go-plugin's broker, so that it
	// can call other plugins and read core identity. Nil: the plugin gets no
	// host connection.
	Host pluginv1.HostServer
}

var _ goplugin.GRPCPlugin = (*GoPlugin)(nil)

// GRPCServer is called by go-plugin in the plugin process.
func (g *GoPlugin) GRPCServer(broker *goplugin.GRPCBroker, s *grpc.Server) error {
	if g.Serve == nil {
		return errors.New("protocol: GoPlugin.Serve is not set in the plugin process")
	}
	return g.Serve(broker, s)
}

// GRPCClient is called by go-plugin in the gateway when the plugin is
// dispensed. ctx ends when the plugin process exits.
func (g *GoPlugin) GRPCClient(ctx context.Context, broker *goplugin.GRPCBroker, cc *grpc.ClientConn) (any, error) {
	c := &Conn{Plugin: pluginv1.NewPluginClient(cc), exited: ctx.Done()}
	if g.Host != nil {
		// The broker sends the listener's address to the plugin as soon as
		// it accepts; the plugin dials it while answering Describe, which
		// carries the id.
		c.hostBrokerID = broker.NextId()
		host := g.Host
		go broker.AcceptAndServe(c.hostBrokerID, func(opts []grpc.ServerOption) *grpc.Server {
			s := grpc.NewServer(append(opts, ServerOptions()...)...)
			pluginv1.RegisterHostServer(s, host)
			return s
		})
	}
	return c, nil
}

// Conn is the gateway's gRPC side of one plugin process.
type Conn struct {
	// Plugin is the plugin's gRPC service.
	Plugin pluginv1.PluginClient

	// HostSocket, when set before Describe, is where the gateway serves the
	// Host service over the fast lane's framing (DescribeRequest.host_socket).
	HostSocket string

	exited       <-chan struct{}
	hostBrokerID uint32
}

// Exited is closed when the plugin process has exited.
func (c *Conn) Exited() <-chan struct{} { return c.exited }

// Describe asks the plugin for its manifest, telling it which protocol
// version the gateway speaks and where the Host service is.
func (c *Conn) Describe(ctx context.Context) (*pluginv1.Manifest, error) {
	m, err := c.Plugin.Describe(ctx, &pluginv1.DescribeRequest{
		ProtocolVersion: Version,
		HostBrokerId:    c.hostBrokerID,
		HostSocket:      c.HostSocket,
	})
	if err != nil {
		return nil, fmt.Errorf("describe: %w", err)
	}
	return m, nil
}

// Transport tuning for the gRPC connection, the same on both sides: large
// windows keep flow-control updates off the per-call path.
const (
	grpcWindow     = 1 << 20
	grpcBufferSize = 64 << 10
)

// DialOptions are the gateway's gRPC dial options for a plugin connection.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithInitialWindowSize(grpcWindow),
		grpc.WithInitialConnWindowSize(grpcWindow),
		grpc.WithReadBufferSize(grpcBufferSize),
		grpc.WithWriteBufferSize(grpcBufferSize),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(math.MaxInt32), grpc.MaxCallSendMsgSize(math.MaxInt32)),
	}
}

// ServerOptions are the gRPC server options of both protocol servers (the
// plugin's, and the gateway's Host server).
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.InitialWindowSize(grpcWindow),
		grpc.InitialConnWindowSize(grpcWindow),
		grpc.ReadBufferSize(grpcBufferSize),
		grpc.WriteBufferSize(grpcBufferSize),
		grpc.MaxRecvMsgSize(math.MaxInt32),
		grpc.MaxSendMsgSize(math.MaxInt32),
	}
}
