package openapi

import "encoding/json"

// Document is an OpenAPI 3.0 document, with only the parts the generator
// writes.
type Document struct {
	OpenAPI    string                `json:"openapi"`
	Info       DocInfo               `json:"info"`
	Servers    []Server              `json:"servers,omitempty"`
	Paths      map[string]PathItem   `json:"paths"`
	Components Components            `json:"components"`
	Security   []map[string][]string `json:"security"`
	// Nodes are the Graph nodes served now (x-svc-nodes).
	Nodes []Node `json:"x-svc-nodes"`
}

// DocInfo is the info object.
type DocInfo struct {
	Title       string `json:"title"`
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
}

// Server is one server object.
type Server struct {
	URL string `json:"url"`
}

// PathItem maps lower-case HTTP methods to operations.
type PathItem map[string]*Operation

// Operation is one operation object, with the platform's extensions.
type Operation struct {
	OperationID string                 `json:"operationId"`
	Summary     string                 `json:"summary,omitempty"`
	Description string                 `json:"description,omitempty"`
	Tags        []string               `json:"tags,omitempty"`
	Parameters  []Parameter            `json:"parameters,omitempty"`
	RequestBody *RequestBody           `json:"requestBody,omitempty"`
	Responses   map[string]*Response   `json:"responses"`
	Security    *[]map[string][]string `json:"security,omitempty"`
	// Plugin serves it ("gateway" for compiled-in services, "core" for
	// the gateway's in-process nodes).
	Plugin    string          `json:"x-svc-plugin,omitempty"`
	Procedure string          `json:"x-svc-procedure,omitempty"`
	Access    json.RawMessage `json:"x-svc-access,omitempty"`
	// Streaming: the answer is a stream of the response message.
	Streaming bool `json:"x-svc-streaming,omitempty"`
}

// Parameter is a path, query or header parameter.
type Parameter struct {
	Name        string  `json:"name"`
	In          string  `json:"in"`
	Description string  `json:"description,omitempty"`
	Required    bool    `json:"required,omitempty"`
	Explode     *bool   `json:"explode,omitempty"`
	Schema      *Schema `json:"schema"`
}

// RequestBody is a request body object.
type RequestBody struct {
	Required bool                 `json:"required,omitempty"`
	Content  map[string]MediaType `json:"content"`
}

// Response is a response object or a reference to one.
type Response struct {
	Ref         string               `json:"$ref,omitempty"`
	Description string               `json:"description,omitempty"`
	Content     map[string]MediaType `json:"content,omitempty"`
}

// MediaType is a media type object.
type MediaType struct {
	Schema *Schema `json:"schema"`
}

// Components holds the shared schemas, responses and security schemes.
type Components struct {
	Schemas         map[string]*Schema         `json:"schemas"`
	Responses       map[string]*Response       `json:"responses"`
	SecuritySchemes map[string]*SecurityScheme `json:"securitySchemes"`
}

// SecurityScheme is a security scheme object.
type SecurityScheme struct {
	Type   string `json:"type"`
	Scheme string `json:"scheme,omitempty"`
	// In and Name place an apiKey scheme's credential.
	In          string `json:"in,omitempty"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
}

// Schema is the subset of the OpenAPI 3.0 schema object the generator
// writes.
type Schema struct {
	Ref                  string             `json:"$ref,omitempty"`
	Type                 string             `json:"type,omitempty"`
	Format               string             `json:"format,omitempty"`
	Description          string             `json:"description,omitempty"`
	Nullable             bool               `json:"nullable,omitempty"`
	Enum                 []string           `json:"enum,omitempty"`
	AllOf                []*Schema          `json:"allOf,omitempty"`
	AnyOf                []*Schema          `json:"anyOf,omitempty"`
	OneOf                []*Schema          `json:"oneOf,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	AdditionalProperties *Schema            `json:"additionalProperties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	MinLength            *uint64            `json:"minLength,omitempty"`
	MaxLength            *uint64            `json:"maxLength,omitempty"`
	Pattern              string             `json:"pattern,omitempty"`
	Minimum              *float64           `json:"minimum,omitempty"`
	Maximum              *float64           `json:"maximum,omitempty"`
	ExclusiveMinimum     bool               `json:"exclusiveMinimum,omitempty"`
	ExclusiveMaximum     bool               `json:"exclusiveMaximum,omitempty"`
	MinItems             *uint64            `json:"minItems,omitempty"`
	MaxItems             *uint64            `json:"maxItems,omitempty"`
	UniqueItems          bool               `json:"uniqueItems,omitempty"`
	// Closed: no key but Properties' (additionalProperties: false).
	Closed bool `json:"-"`
	// Open: any other key is taken, passed through (additionalProperties:
	// true).
	Open bool `json:"-"`
}

// MarshalJSON writes the schema, with additionalProperties false when it
// is Closed and true when it is Open.
func (s *Schema) MarshalJSON() ([]byte, error) {
	type plain Schema
	b, err := json.Marshal((*plain)(s))
	if err != nil || (!s.Closed && !s.Open) || s.AdditionalProperties != nil {
		return b, err
	}
	kv := `"additionalProperties":false}`
	if s.Open {
		kv = `"additionalProperties":true}`
	}
	if len(b) == 2 { // {}
		return append(b[:1], kv...), nil
	}
	return append(append(b[:len(b)-1], ','), kv...), nil
}
