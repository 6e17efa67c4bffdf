package httpapi

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// plainBatch is a body of n items that batchItems takes: texts holding
// quotes, backslashes, brackets and escapes, nested conversions, nulls and
// white space between every token.
func plainBatch(n int, sep string) string {
	var b strings.Builder
	b.WriteString(" {\n \"version\" : \"2026-1\" ,\t\"resources\" :\r\n[ ")
	for i := range n {
		if i > 0 {
			b.WriteString(sep)
		}
		fmt.Fprintf(&b, `{"id":"r-%d","name":"Skiva \"%d\" [typ] {a}, \\ \u005d ]}","name_en":"Board\n%d",`+
			`"description":"x]}{[\\\"","a1a3":%d.25e0,"a4":null,"conversions":{"kg":%d,"m2":1.5,"[x]":-2},"unit":"m2"}`,
			i, i, i, i, i)
	}
	b.WriteString(" ] \n, \"catalog\":\"national\"\n} \n")
	return b.String()
}

// TestBatchDecodedOnEveryCoreAsWhole: a plain body of several hundred
// items is decoded in parts (decodeBatchParts takes it) to what one Decoder
// makes of it.
func TestBatchDecodedOnEveryCoreAsWhole(t *testing.T) {
	for _, n := range []int{256, 257, 1000} {
		body := []byte(plainBatch(n, " ,\n "))
		parts, ok := decodeBatchParts(body)
		if !ok {
			t.Fatalf("%d items: the plain body was not decoded in parts", n)
		}
		whole, err := decodeBatchWhole(body)
		if err != nil {
			t.Fatal(err)
		}
		if len(parts.Resources) != n || !reflect.DeepEqual(parts, whole) {
			t.Fatalf("%d items: parts differ from the whole decode (%d items)", n, len(parts.Resources))
		}
		if got := parts.Resources[n-1]; got.ID != fmt.Sprintf("r-%d", n-1) || got.Conversions["[x]"] != -2 ||
			got.Name != fmt.Sprintf(`Skiva "%d" [typ] {a}, \ ] ]}`, n-1) || parts.Catalog != "national" || parts.Version != "2026-1" {
			t.Fatalf("last item %+v, catalog %q, version %q", got, parts.Catalog, parts.Version)
		}
	}
}

// TestBatchOtherBodiesDecodedWhole: every other body means, and fails, as
// one Decoder says: the same batch or the same error.
func TestBatchOtherBodiesDecodedWhole(t *testing.T) {
	plain := plainBatch(300, ",")
	item := `{"id":"a","name":"A"}`
	many := strings.Repeat(item+",", 299) + item
	cases := map[string]struct {
		body    string
		wantErr string // "" for a body that decodes
	}{
		"an item with an unknown field": {strings.Replace(plain, `"unit":"m2"}`, `"unit":"m2","colour":"red"}`, 1), `unknown field "colour"`},
		"a comma missing between items": {strings.Replace(plain, `},{"id":"r-7"`, `} {"id":"r-7"`, 1), "invalid character"},
		"a trailing comma":              {strings.Replace(plain, "} ] \n,", "}, ] \n,", 1), "invalid character"},
		"an item of the wrong type":     {strings.Replace(plain, `"a1a3":3.25e0`, `"a1a3":"3"`, 1), "cannot unmarshal"},
		"a second value":                {plain + `{}`, "more than one JSON value"},
		"cut short":                     {plain[:len(plain)/2], "unexpected EOF"},
		"an unknown member":             {`{"catalog":"national","owner":"x","resources":[` + many + `]}`, `unknown field "owner"`},
		"catalog twice, the last kept":  {`{"catalog":"dkbr","catalog":"national","resources":[` + many + `]}`, ""},
		"resources spelt otherwise":     {`{"catalog":"national","Resources":[` + many + `]}`, ""},
		"an escaped key":                {`{"catalog":"national","resource\u0073":[` + many + `]}`, ""},
		"resources null":                {`{"catalog":"national","resources":null}`, ""},
		"no resources":                  {`{"catalog":"national"}`, ""},
		"few items":                     {`{"catalog":"national","resources":[` + item + `]}`, ""},
		"an item null":                  {`{"catalog":"national","resources":[` + many + `,null]}`, ""},
		"an array, not an object":       {`[` + many + `]`, "cannot unmarshal array"},
		"resources an object":           {`{"catalog":"national","resources":{"id":"a"}}`, "cannot unmarshal object"},
	}
	for name, c := range cases {
		body := []byte(c.body)
		got, err := decodeBatch(body)
		want, wantErr := decodeBatchWhole(body)
		if c.wantErr == "" {
			if err != nil || wantErr != nil {
				t.Errorf("%s: %v (one Decoder: %v)", name, err, wantErr)
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: decoded otherwise than by one Decoder", name)
			}
			continue
		}
		if err == nil || wantErr == nil || err.Error() != wantErr.Error() || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%s: error %v, one Decoder's %v, want one containing %q", name, err, wantErr, c.wantErr)
		}
	}
}
