// Package pluginrt is the plugin side of the plugin protocol, the part of
// package sdk a plugin author never sees: the table of registered methods,
// running a call from its wire form (decode, deadline, trace span, panics,
// encode), the manifest, the gRPC service and the fast lane a plugin process
// serves, its connection to the gateway's Host service, its logger, stop
// hooks and profiles.
//
// Package sdk defines its Plugin, Call and HostClient as this package's
// types (type Plugin pluginrt.Plugin), so that the platform reaches a
// plugin's protocol side with a plain conversion, (*pluginrt.Plugin)(p),
// and sdk's API keeps only what a plugin author uses. sdk's own types
// (Error, Principal, PageAccess) never appear here: a call's principal and
// Page facts stay in their wire form, sdk converts them where its types
// are, and a handler's error reaches the wire through the Refuse function
// sdk gives New.
//
// This package must not import package sdk or the gateway.
package pluginrt
