package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"

	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
	"github.com/svcplatform/svc/sdk"
)

func TestTemplateBodiesParse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		rule, body string
		params     []string
		field      string
	}{
		{"a body without placeholders takes no params", "Hello World", nil, ""},
		{"every placeholder is a declared param", "Order {{order_id}} is {{status}}.", []string{"order_id", "status"}, ""},
		{"a placeholder used twice is one param", "{{a}} and {{a}}", []string{"a"}, ""},
		{"an undeclared placeholder is refused naming params", "Hi {{name}}", nil, "params"},
		{"a declared param the body does not use is refused", "Hi", []string{"name"}, "params"},
		{"a param listed twice is refused", "{{a}}", []string{"a", "a"}, "params"},
		{"an unclosed placeholder is refused naming body", "Hi {{name", []string{"name"}, "body"},
		{"a closing brace pair without an opening is refused", "Hi name}}", nil, "body"},
		{"a placeholder with spaces is refused", "Hi {{ name }}", []string{"name"}, "body"},
		{"an empty placeholder is refused", "Hi {{}}", nil, "body"},
		{"an empty body is refused", "", nil, "body"},
		{"a body over 1,024 code points is refused", strings.Repeat("é", 1025), nil, "body"},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			params := c.params
			if params == nil {
				params = []string{}
			}
			field, err := checkDefinition(c.body, params)
			if field != c.field || (c.field == "") != (err == nil) {
				t.Fatalf("checkDefinition(%q, %v) = %q, %v; want field %q", c.body, params, field, err, c.field)
			}
		})
	}
}

func TestTemplatesRenderWithExactlyTheirParams(t *testing.T) {
	t.Parallel()
	order := defaultTemplates[1]
	text, err := render(order, map[string]string{"order_id": "A-1", "status": "shipped"})
	if err != nil || text != "Your order A-1 is now shipped." {
		t.Fatalf("render = %q, %v", text, err)
	}
	refused := map[string]map[string]string{
		"a missing parameter is refused":            {"order_id": "A-1"},
		"an extra parameter is refused":             {"order_id": "A-1", "status": "x", "colour": "red"},
		"an empty value is refused":                 {"order_id": "", "status": "x"},
		"a value over 1,024 code points is refused": {"order_id": strings.Repeat("x", 1025), "status": "x"},
	}
	for rule, values := range refused {
		t.Run(rule, func(t *testing.T) {
			if _, err := render(order, values); err == nil {
				t.Fatal("rendered")
			}
		})
	}
	t.Run("a placeholder in a value is not expanded", func(t *testing.T) {
		text, err := render(order, map[string]string{"order_id": "{{status}}", "status": "x"})
		if err != nil || text != "Your order {{status}} is now x." {
			t.Fatalf("render = %q, %v", text, err)
		}
	})
}

func TestPlatformConfigTemplatesAreReadInBothShapes(t *testing.T) {
	t.Parallel()
	byName := map[string]any{"svcchat": map[string]any{"templates": map[string]any{
		"hello_world": map[string]any{"body": "Hi {{who}}", "params": []any{"who"}},
		"broken":      map[string]any{"body": "Hi {{who}}"},
	}}}
	good, bad := configTemplates(byName)
	if len(good) != 1 || good[0].Name != "hello_world" || good[0].Status != StatusDraft || bad["broken"] == "" {
		t.Fatalf("object form: %+v, %v", good, bad)
	}
	asList := map[string]any{"svcchat": map[string]any{"templates": []any{
		map[string]any{"name": "pickup", "body": "Ready", "params": []any{}},
		map[string]any{"name": "Bad Name", "body": "x"},
	}}}
	good, bad = configTemplates(asList)
	if len(good) != 1 || good[0].Name != "pickup" || len(bad) != 1 {
		t.Fatalf("array form: %+v, %v", good, bad)
	}
	if good, bad := configTemplates(map[string]any{"other": 1}); len(good) != 0 || len(bad) != 0 {
		t.Fatalf("no svcchat part: %+v, %v", good, bad)
	}
}

func strp(s string) *string { return &s }

func TestMessageWritesHaveExactlyOneShape(t *testing.T) {
	t.Parallel()
	cases := []struct {
		rule  string
		req   *svcchatv1.SendMessageRequest
		field string
	}{
		{"a session message has recipient_user_id and text", &svcchatv1.SendMessageRequest{RecipientUserId: strp("1"), Text: strp("hi")}, ""},
		{"a template message has to, type and templateName", &svcchatv1.SendMessageRequest{To: strp("1"), Type: strp("template"), TemplateName: strp("hello_world")}, ""},
		{"a session message without text is refused naming text", &svcchatv1.SendMessageRequest{RecipientUserId: strp("1")}, "text"},
		{"a session message without a recipient is refused naming recipient_user_id", &svcchatv1.SendMessageRequest{Text: strp("hi")}, "recipient_user_id"},
		{"to without type is refused naming to", &svcchatv1.SendMessageRequest{To: strp("1"), Text: strp("hi")}, "to"},
		{"templateName without type is refused naming it", &svcchatv1.SendMessageRequest{RecipientUserId: strp("1"), Text: strp("hi"), TemplateName: strp("x")}, "templateName"},
		{"a type other than template is refused naming type", &svcchatv1.SendMessageRequest{Type: strp("text")}, "type"},
		{"a template message with recipient_user_id is refused naming it", &svcchatv1.SendMessageRequest{To: strp("1"), RecipientUserId: strp("1"), Type: strp("template"), TemplateName: strp("x")}, "recipient_user_id"},
		{"a template message with text is refused naming text", &svcchatv1.SendMessageRequest{To: strp("1"), Type: strp("template"), TemplateName: strp("x"), Text: strp("hi")}, "text"},
		{"a template message without to is refused naming to", &svcchatv1.SendMessageRequest{Type: strp("template"), TemplateName: strp("x")}, "to"},
		{"a template message without templateName is refused naming it", &svcchatv1.SendMessageRequest{To: strp("1"), Type: strp("template")}, "templateName"},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			_, err := parseSend(c.req)
			var e *sdk.Error
			if c.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.As(err, &e) || e.Code != 100 || e.Field != c.field || !strings.Contains(e.Message, c.field) {
				t.Fatalf("error = %v; want code 100 naming %s", err, c.field)
			}
		})
	}
}

// FuzzTemplateBody: the placeholder parser never panics, and a body it
// accepts renders back to itself when each param is filled with its own
// placeholder.
func FuzzTemplateBody(f *testing.F) {
	for _, s := range []string{"", "Hello", "Order {{order_id}} is {{status}}.", "{{", "}}", "{{a}}{{b}}", "{{ a }}", "{{{a}}}", "x{{é}}", "{{a}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		segs, err := parseBody(body)
		if err != nil {
			return
		}
		var params []string
		values := map[string]string{}
		var rebuilt strings.Builder
		for _, s := range segs {
			if s.Param == "" {
				rebuilt.WriteString(s.Text)
				continue
			}
			if !validParamName(s.Param) {
				t.Fatalf("parsed an invalid param %q", s.Param)
			}
			rebuilt.WriteString("{{" + s.Param + "}}")
			if _, ok := values[s.Param]; !ok {
				params = append(params, s.Param)
				values[s.Param] = "{{" + s.Param + "}}"
			}
		}
		if rebuilt.String() != body {
			t.Fatalf("segments of %q rebuild %q", body, rebuilt.String())
		}
		if utf8.RuneCountInString(body) > maxTemplateBody || body == "" || len(params) > maxTemplateParams {
			return
		}
		if field, err := checkDefinition(body, append([]string{}, params...)); err != nil {
			t.Fatalf("checkDefinition(%q, %v) = %s: %v", body, params, field, err)
		}
		if text, err := render(Template{Name: "t", Body: body, Params: params}, values); err == nil && text != body {
			t.Fatalf("render(%q) with its own placeholders = %q", body, text)
		}
	})
}

// FuzzSendMessageBody: a message write body, decoded as the gateway
// decodes it, is either refused with a 100 or 132000 naming a field, or
// has exactly one shape.
func FuzzSendMessageBody(f *testing.F) {
	for _, s := range []string{
		`{"recipient_user_id":"1","text":"hi"}`,
		`{"to":"1","type":"template","templateName":"order_update","templateParams":{"order_id":"1","status":"x"}}`,
		`{"to":"1","type":"template","templateName":"x","templateParams":{"a":1}}`,
		`{"to":"1","text":"x"}`, `{"type":"x"}`, `{}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var req svcchatv1.SendMessageRequest
		if protojson.Unmarshal([]byte(body), &req) != nil {
			return
		}
		shape, err := parseSend(&req)
		if err != nil {
			var e *sdk.Error
			if !errors.As(err, &e) || (e.Code != 100 && e.Code != 132000) || e.Field == "" {
				t.Fatalf("parseSend(%s) = %v", body, err)
			}
			return
		}
		if shape.template {
			if req.RecipientUserId != nil || req.Text != nil || req.To == nil || req.GetTemplateName() == "" {
				t.Fatalf("template shape accepted for %s", body)
			}
		} else if req.Type != nil || req.To != nil || req.TemplateName != nil || req.TemplateParams != nil || req.Text == nil || req.RecipientUserId == nil {
			t.Fatalf("session shape accepted for %s", body)
		}
	})
}

// FuzzPlatformConfigTemplates: whatever an app stores in its
// platformConfig, the reader keeps only well-formed templates.
func FuzzPlatformConfigTemplates(f *testing.F) {
	for _, s := range []string{
		`{"svcchat":{"templates":{"hello_world":{"body":"Hi {{who}}","params":["who"]}}}}`,
		`{"svcchat":{"templates":[{"name":"a","body":"x"},{"name":"a","body":"y"}]}}`,
		`{"svcchat":{"templates":"x"}}`, `{"svcchat":[]}`, `{}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cfg string) {
		var st map[string]any
		if err := jsonUnmarshal(cfg, &st); err != nil {
			return
		}
		good, _ := configTemplates(st)
		seen := map[string]bool{}
		for _, g := range good {
			if !templateNameOK(g.Name) || seen[g.Name] {
				t.Fatalf("kept template name %q", g.Name)
			}
			seen[g.Name] = true
			if _, err := checkDefinition(g.Body, g.Params); err != nil {
				t.Fatalf("kept malformed template %+v: %v", g, err)
			}
		}
	})
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
