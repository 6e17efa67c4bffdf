package boverket

import (
	"encoding/json"
	"testing"
)

func TestParseNumber(t *testing.T) {
	cases := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"0.39", 0.39, true},
		{"0,39", 0.39, true},
		{" 1 234,5 ", 1234.5, true},
		{"1\u00a0234,5", 1234.5, true},
		{"1.234,5", 1234.5, true},
		{"1,234.5", 1234.5, true},
		{"\u22120,5", -0.5, true},
		{"3.9E-01", 0.39, true},
		{"", 0, false},
		{"-", 0, false},
		{"n/a", 0, false},
	}
	for _, c := range cases {
		got, ok := parseNumber(c.in)
		if ok != c.ok || got != c.want {
			t.Errorf("parseNumber(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestMatchHeader(t *testing.T) {
	cases := map[string]column{
		"Resurs-ID":                          colID,
		"  resurs id ":                       colID,
		"RESOURCE ID":                        colID,
		"ResourceId":                         colID,
		"Produktnamn":                        colName,
		"Product name":                       colName,
		"Enhet för klimatpåverkan":           colGWPUnit,
		"Unit for climate impact":            colGWPUnit,
		"Deklarerad enhet":                   colUnit,
		"Enhet":                              colUnit,
		"Klimatpåverkan A1-A3 typiskt värde": colA1A3,
		"Klimatpåverkan A1–A3, typiskt värde (kg CO2e/enhet)": colA1A3,
		"A1 - A3 Typical": colA1A3,
		"Klimatpåverkan A1-A3 konservativt värde": colA1A3Cons,
		"A1-A3 Conservative [kg CO2e]":            colA1A3Cons,
		"A4":                                      colA4,
		"A5.1":                                    colA51,
		"Avfallsfaktor":                           colWaste,
		"Waste factor":                            colWaste,
		"Omräkningsfaktor":                        colConvFactor,
		"Enhet omräkningsfaktor":                  colConvUnit,
		"Conversion unit":                         colConvUnit,
		"Synonymer":                               colSynonyms,
		"Version":                                 colVersion,
		"Beskrivning":                             colDescription,
		"Kategori":                                colCategory,
		"Category code":                           colCategoryCode,
	}
	for h, want := range cases {
		got, ok := matchHeader(h)
		if !ok || got != want {
			t.Errorf("matchHeader(%q) = %v, %v; want %v", h, got, ok, want)
		}
	}
	for _, h := range []string{"", "Kommentar", "A5", "Giltig till"} {
		if c, ok := matchHeader(h); ok {
			t.Errorf("matchHeader(%q) = %v, want no match", h, c)
		}
	}
}

func TestCompareVersions(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"02.06.000", "02.07.000", -1},
		{"02.07.000", "02.06.000", 1},
		{"02.07.000", "02.07.000", 0},
		{"02.10.000", "02.9.000", 1},
		{"", "02.06.000", -1},
		{"02.06.000", "", 1},
		{"02.06.001", "02.06", 1},
	}
	for _, c := range cases {
		if got := compareVersions(c.a, c.b); got != c.want {
			t.Errorf("compareVersions(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestNormalizeID(t *testing.T) {
	for in, want := range map[string]string{
		"6000000000":   "6000000000",
		" 6000000000 ": "6000000000",
		"6E+09":        "6000000000",
		"6000000000.0": "6000000000",
		"0":            "",
		"":             "",
		"abc-1":        "abc-1",
	} {
		if got := normalizeID(in); got != want {
			t.Errorf("normalizeID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTextAndNumberDecoding(t *testing.T) {
	var v struct {
		A, B, C    Text
		X, Y, Z, W Number
	}
	err := json.Unmarshal([]byte(`{"A":6000000000,"B":" 10 ","C":null,"X":0.39,"Y":"0,5","Z":null,"W":""}`), &v)
	if err != nil {
		t.Fatal(err)
	}
	if v.A != "6000000000" || v.B != "10" || v.C != "" {
		t.Errorf("texts = %q %q %q", v.A, v.B, v.C)
	}
	if !v.X.Valid || v.X.V != 0.39 || !v.Y.Valid || v.Y.V != 0.5 || v.Z.Valid || v.W.Valid {
		t.Errorf("numbers = %+v %+v %+v %+v", v.X, v.Y, v.Z, v.W)
	}
	if err := json.Unmarshal([]byte(`{"X":"many"}`), &v); err == nil {
		t.Error("a non-numeric string for a number should fail")
	}
}
