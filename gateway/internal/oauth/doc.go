// Package oauth is the platform's OAuth 2.0 and OpenID Connect authorization
// server: the sign-in and consent pages, `/oauth/authorize`, the token
// endpoint (`/api/oauth/token`: authorization_code with mandatory PKCE S256,
// refresh_token with rotation, client_credentials for system user tokens),
// revocation (RFC 7009), introspection (RFC 7662), userinfo, discovery
// (`/.well-known/openid-configuration` and `/.well-known/oauth-authorization-server`,
// RFC 8414) and the JWKS of the id_token signing key; and the console
// explorer's server-side code exchange (`/api/developers/explorer/token`,
// explorer.go), so that a client secret is never put in a browser.
//
// # Why the protocol is implemented here rather than with a library
//
// The protocol surface we need is small (one response type, three grants),
// while the invariants that matter are all about storage: a code is used at
// most once and its reuse revokes what it issued; a refresh token is
// rotated, and its reuse revokes the whole family, access tokens included;
// tokens exist only as hashes; several gateways share one PostgreSQL. The
// available Go servers (fosite, go-oauth2/oauth2, zitadel/oidc) bring their
// own storage interfaces and token formats, and would sit between these
// rules and the SQL that enforces them. Here each rule is one SQL statement
// or transaction in sql/core/queries/oauth.sql — redeeming a code is a single
// UPDATE … RETURNING with the inserts of its tokens — and each is tested
// with real clients (golang.org/x/oauth2, go-oidc, openid-client). The only
// cryptography is standard library: SHA-256, crypto/rand, and RS256 (RSA
// PKCS #1 v1.5 with SHA-256) for id_tokens.
//
// # The id_token signing key
//
// On first start the gateway generates an RSA-2048 key and stores it in
// core.signing_keys, so that every gateway of an installation signs with
// the same key (the first insert wins; the others read it). The private key
// is stored as PKCS #8 sealed with AES-256-GCM under Options.KeySecret,
// which the gateway derives from the installation's master key
// (secretbox.Box.Derive), so a copy of the database alone does not hold it; it never leaves the database except into gateway memory, and is
// never logged or served (the JWKS holds the public half only).
//
// # Rules worth knowing
//
//   - client_id and redirect_uri are checked before anything else; when
//     either is wrong the error page is shown and the browser is never
//     redirected. Redirect URIs match registered ones exactly.
//   - Every redirect back to the client carries `iss` (RFC 9207) and the
//     request's `state`.
//   - Development-mode apps may be authorized by their team and Test Users
//     only (others get access_denied), for any scope; live apps by anyone,
//     for openid and the scopes App Review approved (others: invalid_scope).
//   - Consent is remembered per user and app (the union of scopes granted);
//     prompt=consent asks again, prompt=none never shows a page.
//   - Sign-in and consent forms are protected by a double-submit CSRF
//     cookie; the session cookie is HttpOnly, SameSite=Lax, Secure under TLS.
//
// oauth must not authorize Graph calls (package auth does) nor own users,
// apps or Pages (package identity does).
package oauth
