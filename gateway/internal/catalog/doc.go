// Package catalog serves svc.catalog.v1.CatalogService: the developer
// catalog (GET /api/developers/platform/catalog) and the product parity
// list (GET /api/v1/business/parity) of CONTRACT §12. Both are generated on
// every call from the route table in use, which is built from the manifests
// of the plugins loaded now, so they change when an operator adds, removes
// or reloads a plugin, with no list kept by hand.
//
// It reads the route table and the host's plugin states; it changes
// nothing.
package catalog
