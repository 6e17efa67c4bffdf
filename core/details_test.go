package core

import "testing"

// TestDetailsPathEncodesTheID: the details path of a hit can be requested as
// it is; a raw # would make the rest of the id a URL fragment.
func TestDetailsPathEncodesTheID(t *testing.T) {
	for k, want := range map[Key]string{
		{DKBR, "#G0740"}:         "/api/resources/dkbr:%23G0740",
		{National, "6000000000"}: "/api/resources/national:6000000000",
		{DKBR, "a b/c?d%"}:       "/api/resources/dkbr:a%20b%2Fc%3Fd%25",
	} {
		if got := DetailsPath(k); got != want {
			t.Errorf("DetailsPath(%s) = %s, want %s", k, got, want)
		}
	}
}
