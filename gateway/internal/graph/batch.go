package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/svcplatform/svc/gateway/internal/apierr"
)

// MaxBatch is the most items one batch request may carry.
const MaxBatch = 50

// BatchItem is one request of a batch.
type BatchItem struct {
	Method      string                     `json:"method"`
	RelativeURL string                     `json:"relative_url"`
	Body        map[string]json.RawMessage `json:"body,omitempty"`
	Name        string                     `json:"name,omitempty"`
}

// BatchResult is one answer of a batch, in request order.
type BatchResult struct {
	Code int    `json:"code"`
	Body string `json:"body"`
}

// ParseBatch decodes and checks a batch array.
func ParseBatch(raw json.RawMessage) ([]BatchItem, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var items []BatchItem
	if err := dec.Decode(&items); err != nil {
		return nil, fmt.Errorf("batch must be an array of {method, relative_url, body, name}: %v", err)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("batch is empty")
	}
	if len(items) > MaxBatch {
		return nil, fmt.Errorf("batch has %d items; at most %d are allowed", len(items), MaxBatch)
	}
	names := map[string]bool{}
	for i, it := range items {
		switch strings.ToUpper(it.Method) {
		case http.MethodGet, http.MethodPost, http.MethodDelete:
		default:
			return nil, fmt.Errorf("batch[%d].method must be GET, POST or DELETE", i)
		}
		if it.RelativeURL == "" {
			return nil, fmt.Errorf("batch[%d].relative_url is required", i)
		}
		if it.Name != "" {
			if names[it.Name] {
				return nil, fmt.Errorf("batch[%d].name %q is used twice", i, it.Name)
			}
			names[it.Name] = true
		}
		for _, ref := range references(it) {
			if !names[ref] {
				return nil, fmt.Errorf("batch[%d] refers to %q, which is not the name of an earlier item", i, ref)
			}
		}
	}
	return items, nil
}

// refPattern matches {result=<name>:<JSONPath>}.
var refPattern = regexp.MustCompile(`\{result=([A-Za-z0-9_\-]+):(\$[A-Za-z0-9_.*\[\]\-]*)\}`)

func references(it BatchItem) []string {
	var names []string
	texts := []string{it.RelativeURL}
	for _, v := range it.Body {
		texts = append(texts, string(v))
	}
	for _, t := range texts {
		for _, m := range refPattern.FindAllStringSubmatch(t, -1) {
			names = append(names, m[1])
		}
	}
	return names
}

// batch runs each item in order; an item that refers to a failed item
// fails too.
func (h *Handler) batch(ctx context.Context, raw json.RawMessage) (int, []byte, error) {
	items, err := ParseBatch(raw)
	if err != nil {
		return 0, nil, h.refuseBody(ctx, "", apierr.Invalid("batch", "Invalid parameter: %v.", err))
	}
	results := make([]BatchResult, len(items))
	named := map[string]any{}
	for i, it := range items {
		status, body := h.batchItem(ctx, it, named)
		results[i] = BatchResult{Code: status, Body: string(body)}
		if it.Name != "" && status == http.StatusOK {
			var doc any
			if json.Unmarshal(body, &doc) == nil {
				named[it.Name] = doc
			}
		}
	}
	b, err := json.Marshal(results)
	if err != nil {
		return 0, nil, apierr.Internal(err)
	}
	return http.StatusOK, b, nil
}

func (h *Handler) batchItem(ctx context.Context, it BatchItem, named map[string]any) (int, []byte) {
	fail := func(err error) (int, []byte) { return apierr.Body(ctx, err) }
	rel, err := substitute(it.RelativeURL, named, false)
	if err != nil {
		return fail(err)
	}
	body := it.Body
	if len(body) > 0 {
		body = make(map[string]json.RawMessage, len(it.Body))
		for k, v := range it.Body {
			s, err := substitute(string(v), named, true)
			if err != nil {
				return fail(err)
			}
			body[k] = json.RawMessage(s)
		}
	}
	u, err := url.Parse(strings.TrimPrefix(rel, "/"))
	if err != nil || u.IsAbs() || u.Host != "" {
		return fail(apierr.Invalid("relative_url", "Invalid parameter: relative_url %q is not a relative node URL.", it.RelativeURL))
	}
	q := u.Query()
	if u.Path != "" {
		q.Set("node", strings.TrimPrefix(u.Path, "api/v1/graph"))
	}
	verb := strings.ToUpper(it.Method)
	if verb == http.MethodPost {
		if body == nil {
			body = map[string]json.RawMessage{}
		}
	} else if len(body) > 0 {
		return fail(apierr.Invalid("body", "Invalid parameter: a %s item carries no body.", verb))
	} else {
		body = nil
	}
	var wb *writeBody
	if body != nil {
		wb = &writeBody{fields: body}
	}
	status, out, err := h.do(ctx, verb, q, wb, nil)
	if err != nil {
		return fail(err)
	}
	return status, out
}

// substitute replaces {result=name:$.path} references. In JSON bodies a
// reference that is a whole string value is replaced by the JSON value.
func substitute(text string, named map[string]any, inJSON bool) (string, error) {
	var failure error
	out := refPattern.ReplaceAllStringFunc(text, func(ref string) string {
		m := refPattern.FindStringSubmatch(ref)
		doc, ok := named[m[1]]
		if !ok {
			failure = apierr.Invalid("batch", "Invalid parameter: %q refers to item %q, which failed.", ref, m[1])
			return ""
		}
		vals, err := jsonPath(doc, m[2])
		if err != nil || len(vals) == 0 {
			failure = apierr.Invalid("batch", "Invalid parameter: %q matches nothing in the result of %q.", ref, m[1])
			return ""
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = fmt.Sprint(v)
		}
		s := strings.Join(parts, ",")
		if inJSON {
			b, _ := json.Marshal(s)
			return string(b[1 : len(b)-1])
		}
		return url.QueryEscape(s)
	})
	return out, failure
}

// jsonPath evaluates the subset $.a.b, $.data.*.id, $.data[0].id.
func jsonPath(doc any, path string) ([]any, error) {
	if path == "$" {
		return []any{doc}, nil
	}
	if !strings.HasPrefix(path, "$.") {
		return nil, fmt.Errorf("path must start with $ and a dot")
	}
	cur := []any{doc}
	for _, step := range strings.Split(strings.ReplaceAll(path[2:], "[", ".["), ".") {
		if step == "" {
			return nil, fmt.Errorf("empty step")
		}
		var next []any
		for _, c := range cur {
			switch {
			case step == "*" || step == "[*]":
				switch v := c.(type) {
				case []any:
					next = append(next, v...)
				case map[string]any:
					for _, x := range v {
						next = append(next, x)
					}
				}
			case strings.HasPrefix(step, "["):
				var i int
				if _, err := fmt.Sscanf(step, "[%d]", &i); err != nil {
					return nil, fmt.Errorf("bad index %q", step)
				}
				if arr, ok := c.([]any); ok && i >= 0 && i < len(arr) {
					next = append(next, arr[i])
				}
			default:
				if obj, ok := c.(map[string]any); ok {
					if v, ok := obj[step]; ok {
						next = append(next, v)
					}
				}
			}
		}
		cur = next
	}
	return cur, nil
}
