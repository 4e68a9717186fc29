package main

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode"
)

// The schemas of custom audience entries (CONTRACT §19).
const (
	schemaEmail  = "EMAIL_SHA256"
	schemaPhone  = "PHONE_SHA256"
	schemaUserID = "USER_ID"
)

// sha256Of is the SHA-256 of s.
func sha256Of(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// userHash is the SHA-256 of a platform user id: how this plugin names a
// person in audiences, clicks and conversions (external_id is its hex).
func userHash(userID string) []byte { return sha256Of(strings.TrimSpace(userID)) }

// parseHash reads a SHA-256 in hex (either case, spaces around ignored);
// ok is false for anything else.
func parseHash(s string) ([]byte, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if len(s) != 64 {
		return nil, false
	}
	b, err := hex.DecodeString(s)
	return b, err == nil
}

// normaliseEmail is an email as Meta hashes it: spaces around removed,
// lower case; "" when it is not an address.
func normaliseEmail(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	at := strings.IndexByte(s, '@')
	if at <= 0 || at != strings.LastIndexByte(s, '@') || at == len(s)-1 || strings.ContainsFunc(s, unicode.IsSpace) {
		return ""
	}
	return s
}

// normalisePhone is a phone number as Meta hashes it: digits only, with
// the country code, no leading zeros ("+1 (650) 555-0100" is
// "16505550100"); "" when fewer than 7 digits remain or letters are in it.
func normalisePhone(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case unicode.IsLetter(r):
			return ""
		}
	}
	d := strings.TrimLeft(b.String(), "0")
	if len(d) < 7 || len(d) > 15 {
		return ""
	}
	return d
}

// entryHash is the SHA-256 an audience entry of schema stands for: the
// entry itself when it is a SHA-256 hex already (how advertisers should
// send emails and phones), else the hash of its normalised value, which is
// then forgotten. USER_ID entries are platform user ids. ok is false for
// an entry that is neither.
func entryHash(schema, entry string) (hash []byte, ok bool) {
	if schema != schemaUserID {
		if h, ok := parseHash(entry); ok {
			return h, true
		}
	}
	var v string
	switch schema {
	case schemaEmail:
		v = normaliseEmail(entry)
	case schemaPhone:
		v = normalisePhone(entry)
	case schemaUserID:
		v = strings.TrimSpace(entry)
		if v == "" || strings.TrimLeft(v, "0123456789") != "" || len(v) > 20 {
			v = ""
		}
	}
	if v == "" {
		return nil, false
	}
	return sha256Of(v), true
}
