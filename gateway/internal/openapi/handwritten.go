package openapi

// The paths the gateway serves with handlers of its own rather than from
// descriptors: OpenAI's chat completions and models, OAuth 2.0 and OpenID
// Connect, the mobile sign-in and the health checks. Their shapes are
// written here, once, as Go values, from the handlers' own types
// (gateway/internal/openai and plugins/completions, gateway/internal/oauth,
// gateway/internal/auth, gateway/internal/server); a test calls each of them
// on a running gateway and validates the answer against this document
// (e2e/openapi_test.go).

import "github.com/svcplatform/svc/gateway/internal/oauth"

// Paths of the hand-written part that no handler package names (the OAuth
// paths are package oauth's).
const (
	PathChatCompletions = "/v1/chat/completions"
	PathModels          = "/v1/models"
	PathSession         = "/api/mobile/auth/session"
)

func str() *Schema                  { return &Schema{Type: "string"} }
func integer() *Schema              { return &Schema{Type: "integer"} }
func number() *Schema               { return &Schema{Type: "number"} }
func boolean() *Schema              { return &Schema{Type: "boolean"} }
func arrayOf(items *Schema) *Schema { return &Schema{Type: "array", Items: items} }
func enum(values ...string) *Schema { return &Schema{Type: "string", Enum: values} }
func nullable(s *Schema) *Schema    { s.Nullable = true; return s }
func described(s *Schema, d string) *Schema {
	s.Description = d
	return s
}

// object is an object schema; open ones take keys beyond props
// (additionalProperties: true: passed through unchanged).
func object(open bool, required []string, props map[string]*Schema) *Schema {
	return &Schema{Type: "object", Required: required, Properties: props, Open: open}
}

func jsonResponse(desc string, s *Schema) *Response {
	return &Response{Description: desc, Content: map[string]MediaType{"application/json": {Schema: s}}}
}

func formBody(s *Schema) *RequestBody {
	return &RequestBody{Required: true, Content: map[string]MediaType{"application/x-www-form-urlencoded": {Schema: s}}}
}

var (
	noCredential       = &[]map[string][]string{{}}
	bearerOnly         = &[]map[string][]string{{"bearer": {}}}
	clientCredentialed = &[]map[string][]string{{"clientBasic": {}}, {}}
)

func (b *builder) add(path, method string, op *Operation) {
	if op.Plugin == "" {
		op.Plugin = "gateway"
	}
	op.Tags = []string{op.Plugin}
	item := b.doc.Paths[path]
	if item == nil {
		item = PathItem{}
		b.doc.Paths[path] = item
	}
	item[method] = op
}

func (b *builder) schema(name string, s *Schema) *Schema {
	b.doc.Components.Schemas[name] = s
	return ref(name)
}

// handwritten adds the paths served by the gateway's own handlers.
func (b *builder) handwritten() {
	b.doc.Components.SecuritySchemes["clientBasic"] = &SecurityScheme{Type: "http", Scheme: "basic",
		Description: "An app's client_id and client secret (client_secret_basic, each form-urlencoded before Base64, RFC 6749 §2.3.1); client_secret_post sends them as form fields instead."}
	b.openAI()
	b.oauth()
	b.mobile()
	b.explorer()
	b.health()
}

// openAI: CONTRACT §7 and §20. The gateway reads model, messages, stream
// and stream_options and the fields below; everything else is passed to
// the upstream unchanged, so every request and answer object is open.
func (b *builder) openAI() {
	errSchema := b.schema("openai.Error", object(false, []string{"error"}, map[string]*Schema{
		"error": object(true, []string{"message", "type"}, map[string]*Schema{
			"message": str(), "type": str(), "param": nullable(str()), "code": nullable(str()),
		}),
	}))
	errs := jsonResponse("A refusal, in OpenAI's error shape.", errSchema)
	toolCall := b.schema("openai.ToolCall", object(true, []string{"function"}, map[string]*Schema{
		"index": integer(), "id": str(), "type": enum("function"),
		"function": object(true, nil, map[string]*Schema{"name": str(), "arguments": str()}),
	}))
	part := object(true, []string{"type"}, map[string]*Schema{
		"type": described(str(), "text, image_url, input_audio or file."),
		"text": str(), "image_url": object(true, nil, map[string]*Schema{"url": str(), "detail": str()}),
		"input_audio": object(true, nil, map[string]*Schema{"data": str(), "format": str()}),
		"file":        object(true, nil, nil),
	})
	message := b.schema("openai.ChatMessage", object(true, []string{"role"}, map[string]*Schema{
		"role":         enum("system", "developer", "user", "assistant", "tool"),
		"content":      nullable(&Schema{AnyOf: []*Schema{str(), arrayOf(part)}, Description: "Text or content parts; null on an assistant message with tool_calls."}),
		"name":         str(),
		"tool_calls":   arrayOf(toolCall),
		"tool_call_id": str(),
		"refusal":      nullable(str()),
	}))
	stop := &Schema{AnyOf: []*Schema{str(), arrayOf(str())}, Nullable: true}
	request := b.schema("openai.ChatCompletionRequest", described(object(true, []string{"model", "messages"}, map[string]*Schema{
		"model":                 described(str(), "A model of GET /v1/models; svc-builtin is always there."),
		"messages":              &Schema{Type: "array", Items: message, MinItems: ptr(uint64(1))},
		"temperature":           &Schema{Type: "number", Minimum: ptr(0.0), Maximum: ptr(2.0), Nullable: true},
		"top_p":                 nullable(number()),
		"n":                     &Schema{Type: "integer", Minimum: ptr(1.0), Nullable: true},
		"stream":                nullable(boolean()),
		"stream_options":        nullable(object(true, nil, map[string]*Schema{"include_usage": boolean()})),
		"stop":                  stop,
		"max_tokens":            nullable(integer()),
		"max_completion_tokens": nullable(integer()),
		"tools": arrayOf(object(true, []string{"type"}, map[string]*Schema{"type": enum("function"),
			"function": object(true, []string{"name"}, map[string]*Schema{"name": str(), "description": str(), "parameters": object(true, nil, nil)})})),
		"tool_choice":         &Schema{AnyOf: []*Schema{enum("none", "auto", "required"), object(true, nil, nil)}},
		"parallel_tool_calls": boolean(),
		"response_format":     object(true, []string{"type"}, map[string]*Schema{"type": enum("text", "json_object", "json_schema"), "json_schema": object(true, nil, nil)}),
		"seed":                nullable(integer()),
		"logprobs":            nullable(boolean()),
		"top_logprobs":        nullable(integer()),
		"user":                str(),
		"metadata":            nullable(object(true, nil, nil)),
	}), "OpenAI's chat completion request. Fields not listed are passed to the upstream unchanged."))
	usage := b.schema("openai.Usage", object(true, []string{"prompt_tokens", "completion_tokens", "total_tokens"}, map[string]*Schema{
		"prompt_tokens": integer(), "completion_tokens": integer(), "total_tokens": integer(),
	}))
	finish := nullable(described(str(), "stop, length, tool_calls or content_filter (svc-builtin: stop, or tool_calls when it calls a tool)."))
	completion := b.schema("openai.ChatCompletion", object(true, []string{"id", "object", "created", "model", "choices"}, map[string]*Schema{
		"id": str(), "object": enum("chat.completion"), "created": integer(), "model": str(),
		"choices": arrayOf(object(true, []string{"index", "message"}, map[string]*Schema{
			"index": integer(),
			"message": object(true, []string{"role"}, map[string]*Schema{"role": str(), "content": nullable(str()),
				"tool_calls": arrayOf(toolCall), "refusal": nullable(str())}),
			"logprobs":      nullable(object(true, nil, nil)),
			"finish_reason": finish,
		})),
		"usage": usage,
	}))
	b.schema("openai.ChatCompletionChunk", described(object(true, []string{"id", "object", "created", "model", "choices"}, map[string]*Schema{
		"id": str(), "object": enum("chat.completion.chunk"), "created": integer(), "model": str(),
		"choices": arrayOf(object(true, []string{"index", "delta"}, map[string]*Schema{
			"index":         integer(),
			"delta":         object(true, nil, map[string]*Schema{"role": str(), "content": nullable(str()), "tool_calls": arrayOf(toolCall), "refusal": nullable(str())}),
			"logprobs":      nullable(object(true, nil, nil)),
			"finish_reason": finish,
		})),
		"usage": nullable(object(true, nil, nil)),
	}), "One server-sent event of a streamed completion; the stream ends with data: [DONE]."))
	b.add(PathChatCompletions, "post", &Operation{OperationID: "openai.chatCompletions", Summary: "Create a chat completion",
		Description: "OpenAI's chat completions (CONTRACT §7, §20), with an app key or token. Models are routed to the configured upstreams; svc-builtin is not a language model. With stream true the answer is server-sent events of openai.ChatCompletionChunk, ending with data: [DONE]. Every answer carries x-request-id.",
		Plugin:      "completions", Security: bearerOnly,
		RequestBody: &RequestBody{Required: true, Content: map[string]MediaType{"application/json": {Schema: request}}},
		Responses: map[string]*Response{
			"200": {Description: "The completion, or its stream.", Content: map[string]MediaType{
				"application/json":  {Schema: completion},
				"text/event-stream": {Schema: described(str(), "data: <openai.ChatCompletionChunk JSON> events, then data: [DONE].")},
			}},
			"default": errs,
		}})
	models := b.schema("openai.ModelList", object(true, []string{"object", "data"}, map[string]*Schema{
		"object": enum("list"),
		"data": arrayOf(object(true, []string{"id", "object"}, map[string]*Schema{
			"id": str(), "object": enum("model"), "created": integer(), "owned_by": str(),
		})),
	}))
	b.add(PathModels, "get", &Operation{OperationID: "openai.models", Summary: "List the models",
		Description: "The models the completions plugin serves: svc-builtin and those of the configured upstreams.",
		Plugin:      "completions", Security: bearerOnly,
		Responses: map[string]*Response{"200": jsonResponse("The models.", models), "default": errs}})
}

// oauth: CONTRACT §4, RFC 6749, 7009, 7662, 8414, 9207 and OpenID Connect.
func (b *builder) oauth() {
	oauthErr := jsonResponse("An OAuth error (RFC 6749 §5.2).", b.schema("oauth.Error", object(false, []string{"error"}, map[string]*Schema{
		"error": str(), "error_description": str(),
	})))
	html := &Response{Description: "An HTML page: sign-in, consent, or an error that does not redirect (a wrong client_id or redirect_uri).",
		Content: map[string]MediaType{"text/html": {Schema: str()}}}
	redirect := &Response{Description: "To redirect_uri with code, state and iss, or with error and state."}
	authParams := []Parameter{
		{Name: "response_type", In: "query", Required: true, Schema: enum("code")},
		{Name: "client_id", In: "query", Required: true, Schema: &Schema{Type: "string", MinLength: ptr(uint64(1))}},
		{Name: "redirect_uri", In: "query", Required: true, Schema: &Schema{Type: "string", Format: "uri"}, Description: "Exactly one of the app's registered URIs."},
		{Name: "scope", In: "query", Schema: str(), Description: "Space-separated scopes; openid adds an id_token."},
		{Name: "state", In: "query", Schema: str()},
		{Name: "code_challenge", In: "query", Required: true, Schema: str(), Description: "PKCE (RFC 7636), required."},
		{Name: "code_challenge_method", In: "query", Required: true, Schema: enum("S256")},
		{Name: "nonce", In: "query", Schema: str()},
		{Name: "prompt", In: "query", Schema: str(), Description: "consent asks again."},
	}
	b.add(oauth.PathAuthorize, "get", &Operation{OperationID: "oauth.authorize", Summary: "Authorize (browser)",
		Description: "The authorization endpoint: sign-in and consent pages in the user's browser, then a redirect to redirect_uri.",
		Security:    noCredential, Parameters: authParams,
		Responses: map[string]*Response{"200": html, "302": redirect, "400": html}})
	b.add(oauth.PathAuthorize, "post", &Operation{OperationID: "oauth.authorizeDecision", Summary: "Consent decision (browser)",
		Description: "The consent page's form: the request's parameters again, with decision and the page's CSRF token, under the sign-in cookie.",
		Security:    noCredential,
		RequestBody: formBody(object(true, []string{"decision"}, map[string]*Schema{"decision": enum("approve", "deny")})),
		Responses:   map[string]*Response{"200": html, "302": redirect, "400": html}})

	// Each grant names its own required fields; the properties are listed
	// once, on the form.
	grant := func(name string, required ...string) *Schema {
		return &Schema{Type: "object", Required: append([]string{"grant_type"}, required...),
			Properties: map[string]*Schema{"grant_type": enum(name)}}
	}
	token := b.schema("oauth.TokenRequest", &Schema{Type: "object", Required: []string{"grant_type"},
		Description: "One of three grants; the client authenticates by HTTP Basic or with client_id and client_secret in the form.",
		Properties: map[string]*Schema{
			"grant_type": enum("authorization_code", "refresh_token", "client_credentials"),
			"code":       str(), "redirect_uri": str(), "code_verifier": str(), "refresh_token": str(), "scope": str(),
			"client_id": str(), "client_secret": str(),
		},
		OneOf: []*Schema{
			grant("authorization_code", "code", "redirect_uri", "code_verifier"),
			grant("refresh_token", "refresh_token"),
			grant("client_credentials"),
		},
	})
	tokens := b.schema("oauth.TokenResponse", object(false, []string{"access_token", "token_type", "expires_in", "scope"}, map[string]*Schema{
		"access_token": str(), "token_type": enum("Bearer"), "expires_in": integer(), "scope": str(),
		"refresh_token": described(str(), "authorization_code and refresh_token grants; rotated on every use."),
		"id_token":      described(str(), "With the openid scope: a JWT signed with a key of the JWKS."),
	}))
	b.add(oauth.PathToken, "post", &Operation{OperationID: "oauth.token", Summary: "Issue tokens",
		Description: "The token endpoint: authorization_code (with PKCE), refresh_token (rotated; reuse revokes the family) and client_credentials (a system user token for the app).",
		Security:    clientCredentialed, RequestBody: formBody(token),
		Responses: map[string]*Response{"200": jsonResponse("The tokens.", tokens), "default": oauthErr}})
	tokenForm := object(false, []string{"token"}, map[string]*Schema{"token": str(), "token_type_hint": enum("access_token", "refresh_token"),
		"client_id": str(), "client_secret": str()})
	b.add(oauth.PathIntrospect, "post", &Operation{OperationID: "oauth.introspect", Summary: "Introspect a token (RFC 7662)",
		Security: clientCredentialed, RequestBody: formBody(tokenForm),
		Responses: map[string]*Response{"200": jsonResponse("Whether the token is active, and if so what it is.", b.schema("oauth.Introspection",
			object(false, []string{"active"}, map[string]*Schema{"active": boolean(), "scope": str(), "client_id": str(), "sub": str(),
				"token_type": str(), "exp": integer(), "iat": integer(), "iss": str(), "aud": str()}))),
			"default": oauthErr}})
	b.add(oauth.PathRevoke, "post", &Operation{OperationID: "oauth.revoke", Summary: "Revoke a token (RFC 7009)",
		Security: clientCredentialed, RequestBody: formBody(tokenForm),
		Responses: map[string]*Response{"200": {Description: "Revoked, or it was not valid: the body is empty."}, "default": oauthErr}})
	userinfo := b.schema("oauth.UserInfo", object(true, []string{"sub"}, map[string]*Schema{"sub": str(), "name": described(str(), "With public_profile.")}))
	for _, m := range []string{"get", "post"} {
		b.add(oauth.PathUserinfo, m, &Operation{OperationID: "oauth.userinfo." + m, Summary: "The signed-in user's claims (OpenID Connect)",
			Description: "A user access token with the openid scope, as a bearer or (POST) as the access_token form field.",
			Security:    bearerOnly,
			Responses:   map[string]*Response{"200": jsonResponse("The claims.", userinfo), "default": oauthErr}})
	}
	b.add(oauth.PathJWKS, "get", &Operation{OperationID: "oauth.jwks", Summary: "The keys that sign ID tokens", Security: noCredential,
		Responses: map[string]*Response{"200": jsonResponse("A JWK set (RFC 7517).", b.schema("oauth.JWKS", object(false, []string{"keys"}, map[string]*Schema{
			"keys": arrayOf(object(true, []string{"kty", "kid"}, map[string]*Schema{"kty": str(), "use": str(), "alg": str(), "kid": str(), "n": str(), "e": str()})),
		})))}})
	list := arrayOf(str())
	discovery := b.schema("oauth.Discovery", object(true, []string{"issuer", "authorization_endpoint", "token_endpoint", "jwks_uri"}, map[string]*Schema{
		"issuer": str(), "authorization_endpoint": str(), "token_endpoint": str(), "jwks_uri": str(), "userinfo_endpoint": str(),
		"revocation_endpoint": str(), "introspection_endpoint": str(), "scopes_supported": list, "response_types_supported": list,
		"response_modes_supported": list, "grant_types_supported": list, "subject_types_supported": list,
		"id_token_signing_alg_values_supported": list, "token_endpoint_auth_methods_supported": list,
		"revocation_endpoint_auth_methods_supported": list, "introspection_endpoint_auth_methods_supported": list,
		"code_challenge_methods_supported": list, "claims_supported": list, "prompt_values_supported": list,
		"authorization_response_iss_parameter_supported": boolean(),
	}))
	for i, p := range []string{"/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"} {
		b.add(p, "get", &Operation{OperationID: []string{"oauth.openidConfiguration", "oauth.authorizationServerMetadata"}[i],
			Summary: "Discovery (OpenID Connect Discovery, RFC 8414)", Security: noCredential,
			Responses: map[string]*Response{"200": jsonResponse("The issuer's metadata.", discovery)}})
	}
}

// mobile: the first-party session of CONTRACT §4.
func (b *builder) mobile() {
	signIn := b.schema("mobile.SignInRequest", object(false, []string{"username", "password"}, map[string]*Schema{
		"username": &Schema{Type: "string", MinLength: ptr(uint64(1))}, "password": &Schema{Type: "string", MinLength: ptr(uint64(1))},
	}))
	session := b.schema("mobile.Session", object(false, []string{"sessionToken", "userId", "expiresAt"}, map[string]*Schema{
		"sessionToken": described(str(), "Authorization: Bearer <sessionToken> on the mobile and staff endpoints."),
		"userId":       str(), "expiresAt": &Schema{Type: "string", Format: "date-time"},
	}))
	errs := &Response{Ref: "#/components/responses/Error"}
	b.add(PathSession, "post", &Operation{OperationID: "mobile.signIn", Summary: "Sign in (first-party apps)", Security: noCredential,
		RequestBody: &RequestBody{Required: true, Content: map[string]MediaType{"application/json": {Schema: signIn}}},
		Responses:   map[string]*Response{"200": jsonResponse("The session.", session), "default": errs}})
	b.add(PathSession, "get", &Operation{OperationID: "mobile.session", Summary: "The session's user and CSRF token", Security: bearerOnly,
		Responses: map[string]*Response{"200": jsonResponse("The session.", b.schema("mobile.SessionInfo", object(false, []string{"userId", "expiresAt", "csrfToken"}, map[string]*Schema{
			"userId": str(), "expiresAt": &Schema{Type: "string", Format: "date-time"}, "csrfToken": str(),
		}))), "default": errs}})
	b.add(PathSession, "delete", &Operation{OperationID: "mobile.signOut", Summary: "Sign out", Security: bearerOnly,
		Responses: map[string]*Response{"200": jsonResponse("Signed out.", object(false, []string{"success"}, map[string]*Schema{"success": boolean()})), "default": errs}})
}

// explorer: the console Graph explorer's code exchange on the server
// (gateway/internal/oauth, explorer.go): the browser never holds the
// client secret.
func (b *builder) explorer() {
	req := b.schema("console.ExplorerTokenRequest", object(false, []string{"app_id", "code", "code_verifier", "redirect_uri"},
		map[string]*Schema{"app_id": str(), "code": str(), "code_verifier": str(),
			"redirect_uri": described(str(), "The explorer's callback page, as at /oauth/authorize.")}))
	res := b.schema("console.ExplorerToken", object(false, []string{"access_token", "token_type", "expires_in"},
		map[string]*Schema{"access_token": str(), "token_type": enum("Bearer"), "scope": str(), "expires_in": integer()}))
	b.add(oauth.PathExplorerToken, "post", &Operation{OperationID: "console.explorerToken",
		Summary:     "Redeem the Graph explorer's authorization code on the server (a console session on the app's team, with its X-Svc-CSRF token)",
		Security:    bearerOnly,
		RequestBody: &RequestBody{Required: true, Content: map[string]MediaType{"application/json": {Schema: req}}},
		Responses: map[string]*Response{"200": jsonResponse("The access token, its scopes and expiry; nothing else.", res),
			"default": &Response{Ref: "#/components/responses/Error"}}})
}

// health: the load balancer's checks.
func (b *builder) health() {
	status := b.schema("gateway.Status", object(false, []string{"status"}, map[string]*Schema{"status": enum("ok", "unavailable")}))
	b.add("/healthz", "get", &Operation{OperationID: "gateway.live", Summary: "Liveness", Security: noCredential,
		Responses: map[string]*Response{"200": jsonResponse("The process serves.", status)}})
	b.add("/readyz", "get", &Operation{OperationID: "gateway.ready", Summary: "Readiness", Security: noCredential,
		Responses: map[string]*Response{"200": jsonResponse("Ready: the database answers.", status), "503": jsonResponse("Not ready.", status)}})
	b.add(Path, "get", &Operation{OperationID: "gateway.openapi", Summary: "This document", Security: noCredential,
		Responses: map[string]*Response{"200": jsonResponse("The OpenAPI 3.0 document of what this gateway serves now.", &Schema{Type: "object", Open: true})}})
}
