package protocol

import (
	goplugin "github.com/hashicorp/go-plugin"
)

// Version is the plugin protocol version this code speaks. It is negotiated
// in the go-plugin handshake and repeated in the manifest; a gateway refuses
// a plugin speaking another version.
const Version = 1

// Handshake is shared by the gateway and every plugin. The magic cookie is
// not a secret: it only stops a plugin binary from running when a person
// starts it by hand.
var Handshake = goplugin.HandshakeConfig{
	ProtocolVersion:  Version,
	MagicCookieKey:   "SVC_PLUGIN_MAGIC_COOKIE",
	MagicCookieValue: "5f1c0e7a9b2d4c3e8a6f1b0d7c9e2a4b",
}

// PluginKey names the one plugin type in the go-plugin plugin set.
const PluginKey = "svc"

// Environment variables the gateway sets for a plugin process.
const (
	// EnvFastLaneDir names the private folder (mode 0700, created by the
	// gateway) where the plugin may listen for fast-lane calls. Unset: no
	// fast lane; the gateway calls Invoke over gRPC.
	EnvFastLaneDir = "SVC_PLUGIN_FAST_LANE_DIR"
	// EnvGoPluginSocketDir is go-plugin's own variable: where the plugin
	// creates its gRPC socket. The gateway points it at the same private
	// folder.
	EnvGoPluginSocketDir = goplugin.EnvUnixSocketDir
)

// FastLaneSocket is the file name of the fast-lane socket inside the folder
// named by EnvFastLaneDir.
const FastLaneSocket = "lane.sock"
