package secretbox

import (
	"bytes"
	"testing"
)

func TestDeriveIsFixedPerKeyAndPurpose(t *testing.T) {
	t.Parallel()
	a, _ := New(bytes.Repeat([]byte{1}, KeySize))
	a2, _ := New(bytes.Repeat([]byte{1}, KeySize))
	b, _ := New(bytes.Repeat([]byte{2}, KeySize))
	if !bytes.Equal(a.Derive("x"), a2.Derive("x")) {
		t.Fatal("the same key and purpose derived different secrets")
	}
	if bytes.Equal(a.Derive("x"), a.Derive("y")) || bytes.Equal(a.Derive("x"), b.Derive("x")) {
		t.Fatal("different purposes or keys derived the same secret")
	}
	if len(a.Derive("x")) != 32 {
		t.Fatal("derived secret is not 32 bytes")
	}
}
