package oauth

import (
	"crypto/sha256"
	"encoding/base64"
)

// S256 is the PKCE S256 transform (RFC 7636 §4.2):
// BASE64URL-ENCODE(SHA256(ASCII(code_verifier))).
func S256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// validVerifier checks the code_verifier syntax of RFC 7636 §4.1:
// 43 to 128 characters of [A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~".
func validVerifier(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if !unreserved(v[i]) {
			return false
		}
	}
	return true
}

// validChallenge checks an S256 code_challenge: the base64url (no padding)
// of a SHA-256 digest, so exactly 43 characters of that alphabet.
func validChallenge(c string) bool {
	if len(c) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.Strict().DecodeString(c)
	return err == nil
}

func unreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}
