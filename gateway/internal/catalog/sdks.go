package catalog

// SDK is a software kit the catalog lists: one the repository builds and
// tests in make test (TestEverySDKInTheCatalogIsBuiltAndTested checks
// each entry against the repository), at the gateway's version, since all
// of them are built from this commit.
type SDK struct {
	// Name names the SDK.
	Name string
	// Language is "go" or "typescript".
	Language string
	// Version is the gateway's version.
	Version string
	// Package is where to get it: a Go import path, or how the client is
	// generated.
	Package string
	// Path is its folder in the repository.
	Path string
	// Docs is its documentation, a docs search path.
	Docs string
}

// SDKs are the SDKs of this build, at version.
func SDKs(version string) []SDK {
	return []SDK{
		{Name: "svc plugin SDK", Language: "go", Version: version,
			Package: "github.com/svcplatform/svc/sdk", Path: "sdk", Docs: "docs/SDKS.md#go-plugin-sdk"},
		{Name: "svc Go API client", Language: "go", Version: version,
			Package: "github.com/svcplatform/svc/gen/svc/<product>/v1/<product>v1connect", Path: "gen/svc",
			Docs: "docs/SDKS.md#go-api-client"},
		{Name: "svc TypeScript client", Language: "typescript", Version: version,
			Package: "openapi-typescript <gateway>/api/v1/openapi.json, called with openapi-fetch", Path: "tests/node-openapi",
			Docs: "docs/SDKS.md#typescript-client"},
	}
}
