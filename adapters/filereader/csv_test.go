package filereader

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/climatesearch/climatesearch/core"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

func mustRead(t *testing.T, name string, data []byte, sheet string, lim Limits) *Table {
	t.Helper()
	tb, err := Read(name, data, sheet, lim)
	if err != nil {
		t.Fatalf("Read(%s): %v", name, err)
	}
	return tb
}

func mustFail(t *testing.T, name string, data []byte, lim Limits, wantSub ...string) error {
	t.Helper()
	tb, err := Read(name, data, "", lim)
	if err == nil {
		t.Fatalf("Read(%s) = %d rows, want an error", name, len(tb.Rows))
	}
	if core.KindOf(err) != core.KindInvalid {
		t.Errorf("Read(%s) error kind %v: %v", name, core.KindOf(err), err)
	}
	for _, s := range wantSub {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("Read(%s) error %q lacks %q", name, err, s)
		}
	}
	return err
}

// The Danish/Swedish spreadsheet export: semicolons, decimal commas,
// Windows-1252, a quoted field with a line break.
func TestCSVSemicolonDecimalComma1252(t *testing.T) {
	text := "Sorterings ID;Navn DK;Global Opvarmning, modul A1-A3;Deklareret enhed (FU)\r\n" +
		"#D1;Tagsten, tegl;309,1;M3\r\n" +
		"#D2;\"Mineraluld,\r\nfleksibel\";-0,5;m2\r\n" +
		"#D3;Stål;-;KG\r\n"
	enc, err := charmap.Windows1252.NewEncoder().String(text)
	if err != nil {
		t.Fatal(err)
	}
	tb := mustRead(t, "export.csv", []byte(enc), "", Limits{})
	if tb.Delimiter != ";" || tb.DecimalSeparator != "," || tb.Encoding != "windows-1252" {
		t.Fatalf("delimiter %q decimal %q encoding %q", tb.Delimiter, tb.DecimalSeparator, tb.Encoding)
	}
	if len(tb.Rows) != 3 || tb.Rows[2].Num != 5 {
		t.Fatalf("%d rows, last numbered %d (the line its record starts on)", len(tb.Rows), tb.Rows[len(tb.Rows)-1].Num)
	}
	if c := tb.Rows[0].Cell(2); c.Text != "309,1" || c.Num != 309.1 || !c.IsNum {
		t.Errorf("309,1 read as %+v", c)
	}
	if c := tb.Rows[1].Cell(1); c.Text != "Mineraluld,\r\nfleksibel" && c.Text != "Mineraluld,\nfleksibel" {
		t.Errorf("quoted line break: %q", c.Text)
	}
	if c := tb.Rows[2].Cell(1); c.Text != "Stål" {
		t.Errorf("1252 å: %q", c.Text)
	}
	rep, err := Map(tb, core.DKBR, map[string]string{"id": "Sorterings ID", "name": "Navn DK",
		"a1a3": "Global Opvarmning, modul A1-A3", "unit": "Deklareret enhed (FU)"}, "BR18")
	if err != nil {
		t.Fatal(err, rep.Problems)
	}
	rs := rep.Release.Resources
	if *rs[0].A1A3 != 309.1 || rs[0].Unit != "m³" || *rs[1].A1A3 != -0.5 || rs[1].Unit != "m²" || rs[2].A1A3 != nil || rs[2].Unit != "kg" {
		t.Errorf("resources %+v", rs)
	}
}

func TestCSVEncodings(t *testing.T) {
	body := "id,name,a1a3\n1,Glasull ø,0.5\n"
	u16 := func(order unicode.Endianness) []byte {
		b, err := unicode.UTF16(order, unicode.UseBOM).NewEncoder().Bytes([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name, enc string
		data      []byte
	}{
		{"utf8", "utf-8", []byte(body)},
		{"bom", "utf-8-bom", append([]byte{0xEF, 0xBB, 0xBF}, body...)},
		{"utf16le", "utf-16le", u16(unicode.LittleEndian)},
		{"utf16be", "utf-16be", u16(unicode.BigEndian)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := mustRead(t, "f.csv", tc.data, "", Limits{})
			if tb.Encoding != tc.enc || !reflect.DeepEqual(tb.Headers, []string{"id", "name", "a1a3"}) {
				t.Fatalf("encoding %q headers %q", tb.Encoding, tb.Headers)
			}
			if got := tb.Rows[0].Cell(1).Text; got != "Glasull ø" {
				t.Errorf("name %q", got)
			}
		})
	}
}

// Bad UTF-8 is not refused: it is read as Windows-1252 and says so.
func TestCSVInvalidUTF8ReadsAs1252(t *testing.T) {
	tb := mustRead(t, "f.csv", []byte("id;name\n1;Gr\xe6s \xff\x80\n"), "", Limits{})
	if tb.Encoding != "windows-1252" || tb.Rows[0].Cell(1).Text != "Græs ÿ€" {
		t.Errorf("encoding %s text %q", tb.Encoding, tb.Rows[0].Cell(1).Text)
	}
	// A BOM promises UTF-8: breaking the promise is refused.
	mustFail(t, "f.csv", []byte("\xef\xbb\xbfid;name\n1;Gr\xe6s\n"), Limits{}, "byte-order mark")
}

func TestCSVDelimiters(t *testing.T) {
	for _, tc := range []struct {
		name, text, delim string
	}{
		{"tab", "id\tname\ta1a3\n1\tStål, plade\t2.5\n2\tBeton, C25\t0.1\n", "\t"},
		{"comma", "id,name,a1a3\n1,\"Stål; plade\",2.5\n", ","},
		{"semicolon", "id;name;a1a3\n1;Stål, plade;2,5\n", ";"},
		{"pipe", "id|name|a1a3\n1|Stål|2.5\n", "|"},
		{"sep line", "sep=;\nid;name,x;a1a3\n1;Stål, plade;2,5\n", ";"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := mustRead(t, "f.csv", []byte(tc.text), "", Limits{})
			if tb.Delimiter != tc.delim || len(tb.Headers) != 3 {
				t.Fatalf("delimiter %q headers %q", tb.Delimiter, tb.Headers)
			}
			if c := tb.Rows[0].Cell(2); !c.IsNum || c.Num != 2.5 {
				t.Errorf("a1a3 %+v", c)
			}
		})
	}
	// The sep= line is line 1; the header is on line 2.
	tb := mustRead(t, "f.csv", []byte("sep=;\nid;a1a3\n1;2\n"), "", Limits{})
	if tb.HeaderRow != 2 || tb.Rows[0].Num != 3 {
		t.Errorf("header row %d, first row %d", tb.HeaderRow, tb.Rows[0].Num)
	}
}

func TestCSVDecimalDetection(t *testing.T) {
	for _, tc := range []struct {
		name, text, dec string
		want            []any // per data row: float64 or "no" (not a number)
	}{
		{"dot", "a,b\nx,1.5\ny,-0.25\nz,3\n", ".", []any{1.5, -0.25, 3.0}},
		{"comma", "a;b\nx;1,5\ny;-0,25\nz;3\n", ",", []any{1.5, -0.25, 3.0}},
		// 1,234 in a comma-decimal file is 1.234; 1.234 there is ambiguous.
		{"comma with three decimals", "a;b\nx;1,5\ny;1,234\nz;1.234\n", ",", []any{1.5, 1.234, "no"}},
		// In a dot file, 1,234 might be a thousand: refused, never guessed.
		{"dot with grouping", "a\tb\nx\t1.5\ny\t1,234\nz\t0,5\n", "mixed", []any{1.5, "no", 0.5}},
		{"exponent and sign", "a,b\nx,1.2E-05\ny,+7\nz,\u22123.5\n", ".", []any{1.2e-05, 7.0, -3.5}},
		{"not numbers", "a,b\nx,1 234\ny,12%\nz,NaN\n", ".", []any{"no", "no", "no"}},
		// A semicolon file whose only decimals are ambiguous: comma wins.
		{"tie goes to comma with semicolons", "a;b\nx;1,234\n", ",", []any{1.234}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := mustRead(t, "f.csv", []byte(tc.text), "", Limits{})
			if tb.DecimalSeparator != tc.dec {
				t.Errorf("decimal %q, want %q", tb.DecimalSeparator, tc.dec)
			}
			for i, w := range tc.want {
				c := tb.Rows[i].Cell(1)
				switch w := w.(type) {
				case float64:
					if !c.IsNum || c.Num != w {
						t.Errorf("row %d %q: %+v, want %v", i, c.Text, c, w)
					}
				default:
					if c.IsNum {
						t.Errorf("row %d %q read as %v, want not a number", i, c.Text, c.Num)
					}
				}
			}
		})
	}
}

func TestCSVFloatArtefacts(t *testing.T) {
	tb := mustRead(t, "f.csv", []byte("a,b\nx,309.10000000000002\ny,0.30000000000000004\nz,123456789012345\n"), "", Limits{})
	for i, w := range []float64{309.1, 0.3, 123456789012345} {
		if c := tb.Rows[i].Cell(1); c.Num != w {
			t.Errorf("%q -> %v, want %v", c.Text, c.Num, w)
		}
	}
}

func TestCSVBrokenQuote(t *testing.T) {
	mustFail(t, "f.csv", []byte("id,name\n1,\"open\n2,x\n"), Limits{}, "line")
	mustFail(t, "f.csv", []byte("id,name\n1,a \"b\" c\n"), Limits{}, "line 2")
}

func TestCSVBlankLinesAndRagged(t *testing.T) {
	tb := mustRead(t, "f.csv", []byte("\n\n id , name ,,\n\n1,a\n,,,\n2,b,extra\n"), "", Limits{})
	if tb.HeaderRow != 3 || !reflect.DeepEqual(tb.Headers, []string{"id", "name", "Column C"}) {
		t.Fatalf("header row %d headers %q", tb.HeaderRow, tb.Headers)
	}
	if len(tb.Rows) != 2 || tb.Rows[0].Num != 5 || tb.Rows[1].Num != 7 || tb.Rows[1].Cell(2).Text != "extra" {
		t.Fatalf("rows %+v", tb.Rows)
	}
}

func TestCSVHeadersUnique(t *testing.T) {
	tb := mustRead(t, "f.csv", []byte("A1-A3,a1-a3,,Name\n1,2,3,4\n"), "", Limits{})
	if !reflect.DeepEqual(tb.Headers, []string{"A1-A3", "a1-a3 (2)", "Column C", "Name"}) {
		t.Errorf("headers %q", tb.Headers)
	}
	if tb.Column("name") != 3 || tb.Column(" A1-A3 ") != 0 || tb.Column("missing") != -1 {
		t.Errorf("Column lookups")
	}
}

// A million rows are refused once MaxRows is passed, without reading the
// rest into memory.
func TestCSVMillionRowsRefused(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("id,a1a3\n")
	for i := 0; i < 1_000_000; i++ {
		fmt.Fprintf(&b, "%d,1\n", i)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := mustFail(t, "big.csv", b.Bytes(), Limits{}, "more than 200000 rows")
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrLimit) {
		t.Errorf("not a limit error: %v", err)
	}
	// The text is 12 MB; the rows kept before refusing are 200,000 short ones.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 400<<20 {
		t.Errorf("refusing allocated %d MB", alloc>>20)
	}
	// A smaller limit refuses sooner.
	mustFail(t, "big.csv", b.Bytes(), Limits{MaxRows: 10}, "more than 10 rows")
}
