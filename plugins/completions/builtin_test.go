package main

import (
	"strings"
	"testing"
)

func TestSvcBuiltinCountsTheTokensOfItsOwnText(t *testing.T) {
	t.Parallel()
	text, finish, pieces := builtinAnswer(0)
	if finish != "stop" || text != builtinReply || strings.Join(pieces, "") != text {
		t.Fatalf("%q %q", text, finish)
	}
	if countTokens(text) != len(pieces) {
		t.Fatalf("%d tokens counted, %d streamed", countTokens(text), len(pieces))
	}
	short, finish, pieces := builtinAnswer(3)
	if finish != "length" || len(pieces) != 3 || countTokens(short) != 3 {
		t.Fatalf("cut to 3: %q %q", short, finish)
	}
	if n := countTokens("Hello, wörld 42!"); n != 5 {
		t.Fatalf("countTokens = %d, want 5", n)
	}
}
