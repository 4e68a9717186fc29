package jsonobj

import (
	"bytes"
	"encoding/json"
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
