// Package appnames names the apps of a list a plugin answers (staff's
// review queues show each item's app by name), asking the host once per
// app however many items it has.
package appnames

import (
	"context"

	"github.com/svcplatform/svc/sdk"
)

// Names remembers the app names one answer has asked for. The zero value
// is not usable: make one with New for each answer.
type Names struct {
	host  *sdk.HostClient
	known map[string]string
}

// New names apps through call's host.
func New(call *sdk.Call) *Names { return &Names{host: call.Host(), known: map[string]string{}} }

// Of is the name of the app appID, from the host the first time.
func (n *Names) Of(ctx context.Context, appID string) (string, error) {
	if name, ok := n.known[appID]; ok {
		return name, nil
	}
	app, err := n.host.AppInfo(ctx, appID)
	if err != nil {
		return "", err
	}
	n.known[appID] = app.Name
	return app.Name, nil
}
