package payment

import (
	"encoding/json"
	"math"
	"testing"
)

// Expected values printed by ox's Json.canonicalize, the canonicaliser
// mppx uses (test/payment/node_modules/ox), and RFC 8785 Appendix B.
func TestCanonicalNumbers(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "0"}, {5e-324, "5e-324"}, {-5e-324, "-5e-324"},
		{1.7976931348623157e308, "1.7976931348623157e+308"}, {2.2250738585072014e-308, "2.2250738585072014e-308"},
		{9007199254740992, "9007199254740992"}, {1e21, "1e+21"}, {999999999999999900000, "999999999999999900000"},
		{0.000001, "0.000001"}, {9.999999999999997e-7, "9.999999999999997e-7"}, {333333333.3333333, "333333333.3333333"},
		{4217, "4217"}, {-1.5, "-1.5"}, {1e-7, "1e-7"}, {123e-20, "1.23e-18"}, {0.1, "0.1"}, {100, "100"},
	} {
		got, err := canonical(c.f)
		if err != nil || string(got) != c.want {
			t.Errorf("%v: got %s (%v), want %s", c.f, got, err, c.want)
		}
	}
	if _, err := canonical(math.NaN()); err == nil {
		t.Error("NaN accepted")
	}
}

func TestCanonicalObject(t *testing.T) {
	in := `{"€":1,"\r":2,"😀":3,"\ufb33":4,"1":5,"a":["\u0001\u001f\"\\/<>&` + "\u2028" + `é"],"b":{"z":true,"y":null}}`
	got, err := canonicalJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	// Members by UTF-16 code units (😀, a surrogate pair, before U+FB33),
	// only the mandatory escapes (no \u003c for <, U+2028 raw).
	want := `{"\r":2,"1":5,"a":["\u0001\u001f\"\\/<>&` + "\u2028" + `é"],"b":{"y":null,"z":true},"€":1,"😀":3,"` + "\ufb33" + `":4}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if !json.Valid(got) {
		t.Error("not JSON")
	}
	for _, bad := range []string{`{"a":1} x`, `{"a":}`, ``} {
		if _, err := canonicalJSON([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
