package pluginrt

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/memtrim"
	"github.com/svcplatform/svc/internal/plugin/protocol"
)

// Serve runs the plugin until the gateway stops it or dies, then exits the
// process (sdk.Plugin.Serve).
//
// The gateway starts the process with a private folder
// (protocol.EnvFastLaneDir) and a stop pipe (protocol.EnvStopFD). The
// plugin listens on its lane there, writes one handshake line on stdout
// (protocol.HandshakeLine), and serves until the pipe ends: the gateway
// closing it is the request to stop.
func (p *Plugin) Serve() {
	if os.Getenv(protocol.EnvMagicCookie) != protocol.MagicCookie {
		fmt.Fprintf(stderr, "%s is a plugin of the svc gateway: the gateway starts it from its plugins folder; it does not run on its own.\n", p.name)
		os.Exit(1)
	}
	if err := p.Freeze(); err != nil {
		p.log.Error("plugin cannot start", "error", err)
		os.Exit(1)
	}
	p.served = true
	finishProfiles := p.startProfiles()
	// Start-up (migrations, descriptors) is a burst of its own; the
	// process never returns from Serve, so the trimmer runs for its life.
	p.trim = memtrim.New()
	p.trim.OnTrim(dropAnswers)
	go p.trim.Run(context.Background())
	p.trim.Trigger()
	watchParent(p.log, func() { p.stop(); finishProfiles() })
	lane, err := p.listenLane()
	if err == nil && lane == nil {
		err = fmt.Errorf("%s is not set: the gateway starts plugins", protocol.EnvFastLaneDir)
	}
	if err != nil {
		p.log.Error("plugin cannot listen for the gateway", "error", err)
		os.Exit(1)
	}
	if _, err := fmt.Fprintln(os.Stdout, protocol.HandshakeLine(p.laneSocket)); err != nil {
		p.log.Error("plugin cannot hand its lane to the gateway", "error", err)
		os.Exit(1)
	}
	waitForStop()
	_ = lane.Close()
	p.stop()
	if hc := p.host.Load(); hc != nil {
		_ = hc.close()
	}
	finishProfiles()
	os.Exit(0)
}

// listenLane opens the fast-lane socket in the private folder the gateway
// named, when it named one.
func (p *Plugin) listenLane() (net.Listener, error) {
	dir := os.Getenv(protocol.EnvFastLaneDir)
	if dir == "" {
		return nil, nil
	}
	path := filepath.Join(dir, protocol.FastLaneSocket)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("restrict %s: %w", path, err)
	}
	srv := p.LaneServer(AllowGateway)
	go func() {
		if err := srv.Serve(ln); err != nil {
			p.log.Error("fast lane stopped", "error", err)
		}
	}()
	p.laneSocket = path
	return ln, nil
}

// LaneServer is the plugin's side of the fast lane, admitting the
// processes allow admits.
func (p *Plugin) LaneServer(allow func(pid int) bool) *protocol.LaneServer {
	// A connection's end counts as activity for the trimmer: the gateway
	// closes a burst's extra connections just after it, and what they held
	// is garbage from then on.
	return &protocol.LaneServer{Handler: p.laneInvoke, Stream: p.InvokeStream, Release: releaseAnswer, Allow: allow, Logger: p.log,
		Ended: p.trim.Touch}
}

// AllowGateway admits fast-lane connections from the process that started
// this one (the gateway) only; the plugin's own process is admitted too, for
// in-process tests.
func AllowGateway(pid int) bool {
	return pid == os.Getppid() || pid == os.Getpid()
}

// connectFailedPrecondition is Connect's failed_precondition code.
const connectFailedPrecondition = 9

// describe answers the gateway's Describe: the manifest, once the protocol
// version is checked and the Host service connected.
func (p *Plugin) describe(ctx context.Context, req *pluginv1.DescribeRequest) (*pluginv1.Manifest, error) {
	if v := req.GetProtocolVersion(); v != protocol.Version {
		return nil, &protocol.ControlFault{Procedure: protocol.ProcDescribe, Code: connectFailedPrecondition,
			Message: fmt.Sprintf("the gateway speaks plugin protocol version %d; plugin %q speaks version %d", v, p.name, protocol.Version)}
	}
	if err := p.Freeze(); err != nil {
		return nil, err
	}
	if path := req.GetHostSocket(); path != "" {
		if err := p.ConnectHostLane(ctx, path, p.hostPeer()); err != nil {
			return nil, err
		}
	}
	m := proto.Clone(p.manifest).(*pluginv1.Manifest)
	if p.laneSocket != "" {
		m.FastLane = &pluginv1.FastLane{SocketPath: p.laneSocket}
	}
	return m, nil
}

// laneInvoke is the fast lane's handler: the protocol's own calls
// (Describe, Health), which only the gateway may make, then Invoke.
func (p *Plugin) laneInvoke(ctx context.Context, req *pluginv1.InvokeRequest) *pluginv1.InvokeResponse {
	if !strings.HasPrefix(req.GetProcedure(), "/svc.plugin.v1.") {
		return p.Invoke(ctx, req)
	}
	ctx, cancel := callContext(ctx, req)
	defer cancel()
	switch req.GetProcedure() {
	case protocol.ProcDescribe:
		in := new(pluginv1.DescribeRequest)
		if err := proto.Unmarshal(req.GetRequest(), in); err != nil {
			return protocol.ControlAnswer(nil, err)
		}
		return protocol.ControlAnswer(p.describe(ctx, in))
	case protocol.ProcHealth:
		return protocol.ControlAnswer(p.checkHealth(ctx), nil)
	}
	return p.Invoke(ctx, req)
}

// hostPeer is the process that serves the Host service: the gateway, this
// process's parent; outside Serve (an in-process test), this process.
func (p *Plugin) hostPeer() int {
	if p.served {
		return os.Getppid()
	}
	return os.Getpid()
}

// waitForStop returns when the gateway's stop pipe (protocol.EnvStopFD)
// ends. Without one it never returns: the parent watch stops the process.
func waitForStop() {
	fd, err := strconv.Atoi(os.Getenv(protocol.EnvStopFD))
	if err != nil || fd < 3 {
		select {}
	}
	f := os.NewFile(uintptr(fd), "stop")
	_, _ = io.Copy(io.Discard, f)
	_ = f.Close()
}
