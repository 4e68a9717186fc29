package pluginrt

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// Method is one registered method, its types erased: package sdk's Handle
// and HandleStream build it around a typed handler; the wire sees bytes.
// Exactly one of Unary and Stream is set.
type Method struct {
	Unary  func(ctx context.Context, call *Call, in []byte) ([]byte, error)
	Stream func(ctx context.Context, call *Call, in []byte, send func([]byte) error) error
}

// Procedure returns the procedure name of md, "/package.Service/Method".
func Procedure(md protoreflect.MethodDescriptor) string {
	return "/" + string(md.Parent().FullName()) + "/" + string(md.Name())
}

// Register adds m as the handler of md. It panics when md is registered
// twice or the plugin already serves: a plugin with a wrong registration
// must not start.
func (p *Plugin) Register(md protoreflect.MethodDescriptor, m *Method) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mustNotBeFrozen()
	proc := Procedure(md)
	if _, dup := p.methods[proc]; dup {
		panic(fmt.Sprintf("sdk: %s is registered twice", proc))
	}
	p.methods[proc] = m
	sd := md.Parent().(protoreflect.ServiceDescriptor)
	for _, s := range p.services {
		if s.FullName() == sd.FullName() {
			return
		}
	}
	p.services = append(p.services, sd)
}

// UserLeftProcedure is the reserved procedure of the user-left hook: no
// service declares it, so the route table never routes to it; the gateway
// calls it through the host, on the plugins whose manifest says
// on_user_left.
const UserLeftProcedure = "/svc.plugin.v1.Hooks/UserLeft"

// OnUserLeft registers fn as the plugin's user-left hook (sdk.OnUserLeft)
// and declares it in the manifest. It panics when registered twice or the
// plugin already serves.
func (p *Plugin) OnUserLeft(fn func(ctx context.Context, call *Call, in []byte) ([]byte, error)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mustNotBeFrozen()
	if _, dup := p.methods[UserLeftProcedure]; dup {
		panic("sdk: OnUserLeft is registered twice")
	}
	p.methods[UserLeftProcedure] = &Method{Unary: fn}
}
