// Package route builds the gateway's routing from plugin manifests: every
// method of every plugin service becomes a Connect/gRPC/gRPC-Web handler (and
// REST, through the google.api.http annotations the transcoder reads), with
// no compiled-in knowledge of the service. The same Method values back the
// Graph router. A manifest is admitted by the rules of
// internal/plugin/manifestcheck, the ones a plugin's own tests run
// (plugintest.CheckManifest); route adds none of its own.
//
// Every call passes one pipeline, whatever protocol it came in on: decode
// into a dynamic message, validate with protovalidate, enforce the method's
// access rule through a Guard, forward the original bytes to the plugin, and
// translate the plugin's error into the platform's. route does not parse
// credentials (auth does) and does not manage processes (host does).
package route
