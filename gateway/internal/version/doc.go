// Package version owns the API's major versions and its change history:
// which majors the gateway serves (v1 today), the refusal of any other major
// in an /api/vN path (code 2635), and the changelog served at
// GET /api/v1/platform/changelog and rendered at /developers/changelog, both
// read from the one data file changelog.json.
package version
