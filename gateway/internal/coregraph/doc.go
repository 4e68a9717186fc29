// Package coregraph serves the gateway's own Graph nodes
// (svc.core.v1.GraphService): me, me/pages (list and create),
// me/business_portfolios, page/<id> with its settings and roles,
// page/<id>/connected_assets, debug_token, and the app nodes (app/<id>,
// config, page_links).
//
// The handlers run in-process but are registered on an sdk.Plugin like any
// plugin's, so they are routed, validated and authorized by the same code as
// plugin methods. Identity data is reached only through the identity
// package and sqlc queries; coregraph never parses credentials.
//
// It names no plugin: me/assigned_assets adds the assets of every method a
// plugin declares with svc.plugin.v1.assigned_assets, and an app going
// live is told to every method declared with on_app_live, through the
// dispatcher (Plugins).
package coregraph
