package main

import "testing"

func TestTheSendReferenceNeedsConsecutiveRecipientIDs(t *testing.T) {
	first, last, err := idRange([]string{"100000000000065", "100000000000066", "100000000000067"})
	if err != nil || first != 100000000000065 || last != 100000000000067 {
		t.Errorf("idRange of three consecutive ids = %d, %d, %v; want 100000000000065, 100000000000067, nil", first, last, err)
	}
	for _, ids := range [][]string{
		{"100000000000065", "100000000000067"}, // a gap: pgbench's random range would name a user with no conversation
		{"100000000000066", "100000000000065"},
		{"100000000000065", "x"},
		{},
	} {
		if _, _, err := idRange(ids); err == nil {
			t.Errorf("idRange(%q) accepted ids pgbench cannot draw from a range", ids)
		}
	}
}
