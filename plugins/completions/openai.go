package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
)

// The OpenAI wire types this plugin writes. Only what it produces itself is
// typed: upstream answers are passed through as bytes.

// apiError is an OpenAI error answer: its HTTP status and the error object
// {"error":{"message","type","param","code"}}.
type apiError struct {
	Status int `json:"-"`
	// RetryAfter, in seconds, is sent as Retry-After when positive.
	RetryAfter int     `json:"-"`
	Message    string  `json:"message"`
	Type       string  `json:"type"`
	Param      *string `json:"param"`
	Code       *string `json:"code"`
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s", e.Status, e.Message) }

// body is the JSON the client reads.
func (e *apiError) body() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // messages quote "<= 2" as written
	_ = enc.Encode(struct {
		Error *apiError `json:"error"`
	}{e})
	return bytes.TrimRight(b.Bytes(), "\n")
}

func strp(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// invalid refuses a request parameter (400).
func invalid(param, code, format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error",
		Param: strp(param), Code: strp(code), Message: fmt.Sprintf(format, args...)}
}

// modelNotFound is OpenAI's answer for a model nobody serves (404).
func modelNotFound(model string) *apiError {
	return &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: strp("model"),
		Code:    strp("model_not_found"),
		Message: fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", model)}
}

// unavailable says that no upstream could answer in time (503), or that
// they all asked us to slow down (429).
func unavailable(model string, rateLimited bool, retryAfter int) *apiError {
	if rateLimited {
		return &apiError{Status: http.StatusTooManyRequests, Type: "rate_limit_error", Code: strp("rate_limit_exceeded"),
			RetryAfter: retryAfter,
			Message:    fmt.Sprintf("Every upstream serving `%s` is rate limited; retry after %d seconds.", model, max(retryAfter, 1))}
	}
	return &apiError{Status: http.StatusServiceUnavailable, Type: "server_error", Code: strp("upstream_unavailable"),
		RetryAfter: retryAfter,
		Message:    fmt.Sprintf("No upstream serving `%s` answered; retry shortly.", model)}
}

// internalError hides a fault of ours (500).
func internalError() *apiError {
	return &apiError{Status: http.StatusInternalServerError, Type: "server_error",
		Message: "The server had an error while processing your request. Sorry about that!"}
}

// usage is OpenAI's usage object.
type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// assistantMessage is the message svc-builtin writes: text, or (content
// null) the tool calls it makes.
type assistantMessage struct {
	Role      string     `json:"role"`
	Content   *string    `json:"content"`
	ToolCalls []toolCall `json:"tool_calls,omitempty"`
	Refusal   *string    `json:"refusal"`
}

// toolCall is one call of a function tool. In a stream, its first delta
// carries index, id, type and name, and later ones index and arguments.
type toolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function toolFunction `json:"function"`
}

type toolFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type choice struct {
	Index        int              `json:"index"`
	Message      assistantMessage `json:"message"`
	Logprobs     *struct{}        `json:"logprobs"`
	FinishReason string           `json:"finish_reason"`
}

// completion is a chat.completion object.
type completion struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []choice `json:"choices"`
	Usage   usage    `json:"usage"`
}

type delta struct {
	Role      string     `json:"role,omitempty"`
	Content   *string    `json:"content,omitempty"`
	ToolCalls []toolCall `json:"tool_calls,omitempty"`
}

type chunkChoice struct {
	Index        int       `json:"index"`
	Delta        delta     `json:"delta"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

// chunk is a chat.completion.chunk object.
type chunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []chunkChoice `json:"choices"`
	Usage   *usage        `json:"usage,omitempty"`
}

// model is one entry of GET /v1/models.
type model struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}
