package msgtemplate

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// The template lifecycle, row by row: every (status, action, mode) is
// checked, the allowed steps against interface §3.1 and CONTRACT §5, and
// everything else is refused.
func TestTemplateLifecycleRowByRow(t *testing.T) {
	t.Parallel()
	allowed := []struct {
		rule   string
		from   Status
		action Action
		live   []bool
		to     Status
	}{
		{"a development-mode app approves its own draft", Draft, Approve, []bool{false}, Approved},
		{"a live app submits its draft to review", Draft, Submit, []bool{true}, PendingReview},
		{"staff approve a template under review", PendingReview, StaffApprove, []bool{false, true}, Approved},
		{"staff reject a template under review", PendingReview, StaffReject, []bool{false, true}, Rejected},
		{"editing a draft keeps it a draft", Draft, Edit, []bool{false, true}, Draft},
		{"editing a rejected template makes it a draft again", Rejected, Edit, []bool{false, true}, Draft},
		{"editing an approved template makes it a draft again", Approved, Edit, []bool{false, true}, Draft},
		{"editing a template under review withdraws it to draft", PendingReview, Edit, []bool{false, true}, Draft},
		{"going live sends a template the app approved itself to staff review", Approved, GoLive, []bool{true}, PendingReview},
	}
	want := map[string]Status{}
	for _, a := range allowed {
		for _, live := range a.live {
			want[fmt.Sprint(a.from, a.action, live)] = a.to
			t.Run(fmt.Sprintf("%s (live=%v)", a.rule, live), func(t *testing.T) {
				got, err := Next(a.from, a.action, live)
				if err != nil || got != a.to {
					t.Fatalf("%s %s live=%v = %q, %v; want %q", a.from, a.action, live, got, err, a.to)
				}
			})
		}
	}
	for _, from := range []Status{Draft, PendingReview, Approved, Rejected} {
		for _, action := range []Action{Approve, Submit, StaffApprove, StaffReject, Edit, GoLive} {
			for _, live := range []bool{false, true} {
				if _, ok := want[fmt.Sprint(from, action, live)]; ok {
					continue
				}
				t.Run(fmt.Sprintf("%s on a %s template is refused (live=%v)", action, from, live), func(t *testing.T) {
					got, err := Next(from, action, live)
					if !errors.Is(err, ErrTransition) {
						t.Fatalf("= %q, %v; want refused", got, err)
					}
					if Explain(from, action, live) == "" {
						t.Fatal("no explanation")
					}
				})
			}
		}
	}
}

func TestALiveAppCannotApproveItsOwnTemplate(t *testing.T) {
	t.Parallel()
	if _, err := Next(Draft, Approve, true); !errors.Is(err, ErrTransition) {
		t.Fatal("a live app approved its own draft")
	}
	if msg := Explain(Draft, Approve, true); msg != "A live app cannot approve its own template; submit it for review." {
		t.Fatalf("message = %q", msg)
	}
}

func TestTemplateDefinitionsAreCheckedAgainstTheirParams(t *testing.T) {
	t.Parallel()
	cases := []struct {
		rule, body string
		params     []string
		field      string
	}{
		{"a body without placeholders takes no params", "Hello World", nil, ""},
		{"every placeholder is a declared param", "Order {{order_id}} is {{status}}.", []string{"order_id", "status"}, ""},
		{"an undeclared placeholder is refused naming params", "Hi {{name}}", nil, "params"},
		{"a declared param the body does not use is refused", "Hi", []string{"name"}, "params"},
		{"an unclosed placeholder is refused naming body", "Hi {{name", []string{"name"}, "body"},
		{"a body over 1,024 code points is refused", strings.Repeat("é", 1025), nil, "body"},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			field, err := CheckDefinition(c.body, c.params)
			if field != c.field || (c.field == "") != (err == nil) {
				t.Fatalf("CheckDefinition(%q, %v) = %q, %v; want field %q", c.body, c.params, field, err, c.field)
			}
		})
	}
}

// FuzzParseBody: the placeholder parser never panics, and the segments of
// a body it accepts rebuild the body exactly, with valid parameter names.
func FuzzParseBody(f *testing.F) {
	for _, s := range []string{"", "Hello", "Order {{order_id}} is {{status}}.", "{{", "}}", "{{a}}{{b}}", "{{ a }}", "{{{a}}}", "x{{é}}", "{{a}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		segs, err := ParseBody(body)
		if err != nil {
			return
		}
		if !utf8.ValidString(body) {
			t.Fatalf("accepted invalid UTF-8 %q", body)
		}
		var b strings.Builder
		for _, s := range segs {
			if s.Param == "" {
				b.WriteString(s.Text)
				continue
			}
			if !ValidParamName(s.Param) {
				t.Fatalf("parsed an invalid param %q", s.Param)
			}
			b.WriteString("{{" + s.Param + "}}")
		}
		if b.String() != body {
			t.Fatalf("segments of %q rebuild %q", body, b.String())
		}
	})
}
