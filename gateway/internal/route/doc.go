// Package route builds the gateway's routing from plugin manifests: one
// immutable Table per generation, mapping every procedure of every plugin
// service to its Method (descriptor, access rule, Graph bindings, REST
// status, read-only flag, and the Invoker that serves it), with the types
// and descriptors that transcoding and reflection resolve. It has no
// compiled-in knowledge of any service. A manifest is admitted by the rules
// of internal/plugin/manifestcheck, the ones a plugin's own tests run
// (plugintest.CheckManifest); route adds none of its own.
//
// route is a lookup and nothing else: it does not decode, validate,
// authorize or invoke (package dispatch does, in that order), does not
// parse credentials (auth does), does not manage processes (host does), and
// imports no package above it.
package route
