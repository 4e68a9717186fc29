package sdk

import "strconv"

// ParseID reads an object id as the platform writes them: a positive int64
// in canonical decimal, without sign, leading zeros or spaces ("7", never
// "+7" or "007"). Ids are opaque to callers, so anything else names nothing
// (CONTRACT §1): answer it with NotFound, as for an id that does not exist.
func ParseID(s string) (int64, bool) {
	if s == "" || len(s) > 19 || s[0] < '1' || s[0] > '9' {
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && id > 0
}

// FormatID writes an id the way ParseID reads it.
func FormatID(id int64) string { return strconv.FormatInt(id, 10) }
