package main

import (
	"encoding/json"
	"testing"
)

// decodedRequest is the request's reading by encoding/json, as
// parseRequest read it before it walked the body instead: the reference
// the walk must agree with (FuzzParseRequestReadsAsEncodingJSON).
type decodedRequest struct {
	Model        string
	Roles, Texts []string
	Stream       bool
	IncludeUsage bool
	MaxTokens    int
	N            int
}

// decode reads body (a valid JSON object) as encoding/json does; ok is
// false where encoding/json finds a type it cannot read.
func decode(body []byte) (r decodedRequest, ok bool) {
	var f map[string]json.RawMessage
	if json.Unmarshal(body, &f) != nil {
		return r, false
	}
	get := func(name string) json.RawMessage {
		if v := f[name]; string(v) != "null" {
			return v
		}
		return nil
	}
	if json.Unmarshal(get("model"), &r.Model) != nil {
		return r, false
	}
	var items []json.RawMessage
	if json.Unmarshal(get("messages"), &items) != nil {
		return r, false
	}
	for _, item := range items {
		var m struct {
			Role    *string         `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(item, &m) != nil || m.Role == nil {
			return r, false
		}
		text := ""
		switch {
		case len(m.Content) == 0 || string(m.Content) == "null":
		case m.Content[0] == '"':
			_ = json.Unmarshal(m.Content, &text)
		case m.Content[0] == '[':
			var parts []struct {
				Type *string `json:"type"`
				Text *string `json:"text"`
			}
			if json.Unmarshal(m.Content, &parts) != nil {
				return r, false
			}
			for _, p := range parts {
				if p.Type != nil && *p.Type == "text" && p.Text != nil {
					text += *p.Text
				}
			}
		default:
			return r, false
		}
		r.Roles, r.Texts = append(r.Roles, *m.Role), append(r.Texts, text)
	}
	r.N = 1
	for _, name := range []string{"max_tokens", "max_completion_tokens"} {
		if raw := get(name); raw != nil {
			var v float64
			if json.Unmarshal(raw, &v) != nil {
				return r, false
			}
			if n := int(v); r.MaxTokens == 0 || n < r.MaxTokens {
				r.MaxTokens = n
			}
		}
	}
	if raw := get("n"); raw != nil {
		var v float64
		if json.Unmarshal(raw, &v) != nil {
			return r, false
		}
		r.N = int(v)
	}
	if raw := get("stream"); raw != nil && json.Unmarshal(raw, &r.Stream) != nil {
		return r, false
	}
	if raw := get("stream_options"); raw != nil {
		var so map[string]json.RawMessage
		if json.Unmarshal(raw, &so) != nil {
			return r, false
		}
		if v := so["include_usage"]; v != nil && string(v) != "null" && json.Unmarshal(v, &r.IncludeUsage) != nil {
			return r, false
		}
	}
	return r, true
}

// FuzzParseRequestReadsAsEncodingJSON: what the walk accepts, encoding/json
// reads the same way (model, roles, texts, stream, usage, limits), so that
// walking the body instead of decoding it changed no request's meaning.
func FuzzParseRequestReadsAsEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi \u00e9\n"}]}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"b"}]}],"stream":true,"stream_options":{"include_usage":false}}`,
		`{"model":"m","messages":[{"Role":"user","content":"x","role":"tool","tool_call_id":"c"}],"max_tokens":5,"max_completion_tokens":3.0,"n":2}`,
		`{"model":"m","messages":[null]}`, `{"model":"m","messages":[{"role":"assistant","content":[null]}]}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":1e400}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, e := parseRequest(body)
		if e != nil {
			return
		}
		want, ok := decode(body)
		if !ok {
			t.Fatalf("%q: accepted, but encoding/json cannot read it", body)
		}
		got := decodedRequest{Model: req.Model, Stream: req.Stream, IncludeUsage: req.IncludeUsage, MaxTokens: req.MaxTokens, N: req.N}
		for _, m := range req.Messages {
			got.Roles, got.Texts = append(got.Roles, m.Role), append(got.Texts, m.Content)
		}
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		if string(gj) != string(wj) {
			t.Fatalf("%q: read as %s, encoding/json reads %s", body, gj, wj)
		}
	})
}
