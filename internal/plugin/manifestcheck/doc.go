// Package manifestcheck reads a plugin's manifest into the platform's one
// description of a plugin (Plugin: name, version, events, descriptors,
// methods with their options), applying the rules the gateway applies when
// it loads a plugin. It is shared by the gateway and a plugin's own tests
// (plugintest.CheckManifest), so that both apply the same rules and a
// plugin that passes its tests is not refused at load time for its
// bindings:
//
//   - the manifest's descriptors resolve and name its services; no method
//     streams from the client; rest_success_status is a 2xx status;
//   - every Graph node pattern is well formed (ParseNode's syntax, a
//     variable a whole segment, once), its variables name singular scalar
//     fields of the request, and only unary methods are bound;
//   - every access rule can be enforced: public alone, Page and app rules
//     reading singular string fields of the request;
//   - plugins served side by side (Together) never serve one service or
//     bind one Graph node twice.
//
// A requested node and a node pattern share one syntax, so the parser of a
// requested node lives here too; the gateway's Graph endpoint uses it.
//
// manifestcheck owns no state and makes no call: it reads descriptors. It
// must not import the gateway.
package manifestcheck
