package jsonobj

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

type member struct{ key, value string }

func walk(body string) ([]member, bool) {
	var got []member
	ok := Members([]byte(body), func(k, v []byte) bool {
		got = append(got, member{string(k), string(v)})
		return true
	})
	return got, ok
}

func TestMembersAreTheTopLevelKeysInOrderWithTheirValuesAsWritten(t *testing.T) {
	got, ok := walk(` { "model" : "m", "messages":[{"role":"user","content":"}\"]"}],"n":1 ,"stream":true,"stream":false, "x":null}` + "\n")
	want := []member{{"model", `"m"`}, {"messages", `[{"role":"user","content":"}\"]"}]`}, {"n", "1"}, {"stream", "true"}, {"stream", "false"}, {"x", "null"}}
	if !ok || len(got) != len(want) {
		t.Fatalf("walk %v %v", ok, got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("member %d: %v, want %v", i, got[i], want[i])
		}
	}
}

func TestAKeyWrittenWithEscapesIsReadAsDecoded(t *testing.T) {
	got, ok := walk(`{"str\u0065am":true,"a\"b":1}`)
	if !ok || len(got) != 2 || got[0].key != "stream" || got[1].key != `a"b` {
		t.Fatalf("walk %v %v", ok, got)
	}
}

func TestWhatIsNotAWalkableObjectIsRefused(t *testing.T) {
	for _, body := range []string{``, ` `, `[]`, `"s"`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1 "b":2}`, `{,}`, `{"a":1}x`, `{"a":{"b":1}`, `{"a":"x}`, `{a:1}`, `{"a":1}}`} {
		if _, ok := walk(body); ok {
			t.Errorf("%q was walked", body)
		}
	}
	if got, ok := walk(`{}`); !ok || len(got) != 0 {
		t.Errorf("{}: %v %v", ok, got)
	}
}

func TestTheWalkStopsWhenAsked(t *testing.T) {
	n := 0
	ok := Members([]byte(`{"a":1,"b":2,"c":3}`), func(k, _ []byte) bool { n++; return string(k) != "b" })
	if !ok || n != 2 {
		t.Errorf("ok %v after %d members", ok, n)
	}
}

// FuzzMembers: on every valid JSON object the walk succeeds and finds the
// members a json.Decoder finds, in order, values byte for byte; on
// anything else it never panics.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{"stream":true}`, `{"a":{"b":[1,"]}"]},"stream":true}`, `{"s\"":1, "t" : [ ] }`, `{`, `{"a":1,}`, `{}`, ` {"x":"\u00e9"} `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var got []member
		ok := Members(body, func(k, v []byte) bool {
			got = append(got, member{string(k), string(v)})
			return true
		})
		if !json.Valid(body) {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		if tok, _ := dec.Token(); tok != json.Delim('{') {
			if ok {
				t.Fatalf("%q is no object but was walked", body)
			}
			return
		}
		if !ok {
			t.Fatalf("valid object %q was not walked", body)
		}
		for i := 0; dec.More(); i++ {
			tok, _ := dec.Token()
			var raw json.RawMessage
			_ = dec.Decode(&raw)
			if i >= len(got) || got[i].key != tok.(string) || got[i].value != string(raw) {
				t.Fatalf("%q: member %d walked as %v, decoded as %q %s", body, i, got, tok, raw)
			}
			if i == len(got)-1 && dec.More() {
				t.Fatalf("%q: the walk found %d members, the decoder more", body, len(got))
			}
		}
	})
}

// FuzzElements: on a valid JSON array the walk finds the elements
// encoding/json decodes, in order, byte for byte; on anything else it never
// panics.
func FuzzElements(f *testing.F) {
	for _, s := range []string{`[1,"]",{"a":[2]}]`, `[]`, ` [ null , true ] `, `[`, `[1,]`, `{"a":1}`, `"x"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var got []string
		ok := Elements(body, func(v []byte) bool {
			got = append(got, string(v))
			return true
		})
		if !json.Valid(body) {
			return
		}
		var want []json.RawMessage
		if json.Unmarshal(body, &want) != nil || want == nil { // null decodes as no array
			if ok {
				t.Fatalf("%q is no array but was walked", body)
			}
			return
		}
		if !ok || len(got) != len(want) {
			t.Fatalf("%q: walked %v (%v), decoded %d elements", body, got, ok, len(want))
		}
		for i := range want {
			if got[i] != string(bytes.TrimSpace(want[i])) {
				t.Fatalf("%q: element %d walked as %q, decoded as %s", body, i, got[i], want[i])
			}
		}
	})
}

// FuzzString: a string literal reads as encoding/json reads it, and what
// encoding/json refuses as a string is refused.
func FuzzString(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\"b\u00e9\n"`, `"\xff"`, `"tab	in"`, `1`, `"`, `""`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := String(raw)
		if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
			if ok {
				t.Fatalf("%q is no string literal but was read as %q", raw, got)
			}
			return // null, numbers, whitespace around: not what String is given
		}
		var want string
		err := json.Unmarshal(raw, &want)
		if ok != (err == nil) || got != want {
			t.Fatalf("%q: read as %q (%v), encoding/json: %q (%v)", raw, got, ok, want, err)
		}
	})
}

func TestElementsAreTheArraysValuesInOrderAsWritten(t *testing.T) {
	var got []string
	if !Elements([]byte(` [ {"a":[1,"]"]}, "x" ,3] `), func(v []byte) bool { got = append(got, string(v)); return true }) {
		t.Fatal("array not walked")
	}
	if want := []string{`{"a":[1,"]"]}`, `"x"`, `3`}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("walked %q, want %q", got, want)
	}
	for _, bad := range []string{`{"a":1}`, `[1,]`, `[1 2]`, `[`, `[1]x`} {
		if Elements([]byte(bad), func([]byte) bool { return true }) {
			t.Errorf("%q walked as an array", bad)
		}
	}
}
