package sdk_test

import (
	"math"
	"testing"

	"github.com/svcplatform/svc/sdk"
)

func TestParseIDAcceptsOnlyCanonicalPositiveDecimal(t *testing.T) {
	for s, want := range map[string]int64{"1": 1, "7": 7, "1000000123": 1000000123, "9223372036854775807": math.MaxInt64} {
		if got, ok := sdk.ParseID(s); !ok || got != want {
			t.Errorf("ParseID(%q) = %d, %v; want %d, true", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "0", "007", "+7", "-7", " 7", "7 ", "7a", "0x7", "1e3", "١", "9223372036854775808", "99999999999999999999"} {
		if got, ok := sdk.ParseID(s); ok {
			t.Errorf("ParseID(%q) = %d, true; want refused", s, got)
		}
	}
}

func FuzzParseID(f *testing.F) {
	for _, s := range []string{"1", "007", "+7", "", "9223372036854775807", "9223372036854775808", "-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, ok := sdk.ParseID(s)
		if !ok {
			return
		}
		// Every id read is positive and written back exactly as given: one
		// object has one id string.
		if id <= 0 || sdk.FormatID(id) != s {
			t.Fatalf("ParseID(%q) = %d; FormatID gives %q", s, id, sdk.FormatID(id))
		}
	})
}
