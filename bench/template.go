package bench

import (
	"strconv"
	"strings"
)

// CounterPlaceholder in a URL or body template is replaced by the request's
// number (0, 1, 2, … across all connections of a run), so that every write
// of a run can be unique.
const CounterPlaceholder = "{{counter}}"

// Template appends s with each CounterPlaceholder replaced by n. It returns
// nil when s holds no placeholder (the caller can then send s as is).
func Template(s string) func(n uint64, dst []byte) []byte {
	parts := strings.Split(s, CounterPlaceholder)
	if len(parts) == 1 {
		return nil
	}
	return func(n uint64, dst []byte) []byte {
		for i, p := range parts {
			if i > 0 {
				dst = strconv.AppendUint(dst, n, 10)
			}
			dst = append(dst, p...)
		}
		return dst
	}
}
