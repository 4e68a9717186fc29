// Package auth resolves every request's credential to one Principal and
// enforces the svc.plugin.v1.Access option of a method against it. It is the
// only package that reads credentials (Authorization headers, session
// cookies, the Graph's access_token parameter as handed to it): what
// runs after it sees a *Principal in the context, never a token.
//
// Credentials it accepts, all as `Authorization: Bearer <token>`: user
// access tokens (OAuth code flow), system user tokens (client_credentials),
// app API keys (svc_test_…, svc_live_…), first-party session tokens, and the
// operator's admin token; and the console session as the svc_session cookie.
// On the Graph only, Meta's access_token parameter (query or form body)
// stands in for the header (AccessToken, called by the Graph handler, which
// finds the parameter); header and parameter with different tokens are
// refused.
// Every kind lives in one table (core.credentials) keyed by SHA-256 of the
// token, so authenticating a request is one indexed query.
//
// Cache: an authenticated credential is remembered in process for at most
// CacheTTL (2 s by default, never past its expiry), keyed by the token's
// hash. A revocation made through this process (Revoke, Forget — the OAuth
// server calls Forget for every token it revokes) takes effect at once here;
// on other gateways it takes effect within CacheTTL. That is the staleness
// bound. Unknown, expired and revoked credentials are never cached. The
// Page facts Authorize reads (the caller's role on the Page, the app's link
// and products) are cached per Page, user and app for the same bound, so a
// role removed or a link deleted takes effect within CacheTTL.
//
// The session cookie is HttpOnly and SameSite=Lax (Secure under TLS), so a
// cross-site request that changes state does not carry it; on top of that,
// any request authenticated by the cookie that is not GET, HEAD or OPTIONS
// must carry X-Svc-CSRF equal to CSRFToken of the session (readable by the
// gateway's own pages at GET /api/mobile/auth/session), and is refused when
// its Origin is another host or Sec-Fetch-Site says another site (subcode
// 2069008). Bearer requests are not affected: a browser never adds them on
// its own. The login and consent forms keep their double-submit token
// (package oauth).
//
// Errors are the CONTRACT §3 rows, built with apierr, among them 2069004
// (the caller's standing on the app's team does not allow the call,
// NotOnTeam) and 2069005 (platform staff only, StaffRequired): these two are
// built here only, the gateway's own Graph services (coregraph) included.
// Subcodes of our own, for rows the contract
// leaves open, all with HTTP 403 and code 200: 2069006 this kind of
// credential is not accepted by the method (the operator's admin token
// where it is required too), 2069008 a cookie request without the session's
// CSRF token.
// Wrong username or password at the session endpoint: HTTP 401, code 190,
// subcode 2069007.
//
// auth must not issue OAuth tokens (package oauth does) nor know about
// product rules (session windows, opt-ins): those stay in the plugins.
package auth
