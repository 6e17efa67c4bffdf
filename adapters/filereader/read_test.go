package filereader

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/climatesearch/climatesearch/test/shareddata"
)

// The format comes from the content; the extension only sharpens messages.
func TestReadWrongExtension(t *testing.T) {
	xlsx := shareddata.Read(t, "data", "dkbr", "br25-tabel7-2025.xlsx")
	xls := shareddata.Read(t, "data", "dkbr", "lcabyg-library-biff8.xls")
	csv := shareddata.Read(t, "data", "dkbr", "br18-tabel7-201222.csv")
	for _, tc := range []struct {
		name   string
		data   []byte
		format string
		rows   int
	}{
		{"tabel7.csv", xlsx, FormatXLSX, 507},
		{"tabel7.xls", xlsx, FormatXLSX, 507},
		{"library.xlsx", xls, FormatXLS, 2},
		{"upload", xls, FormatXLS, 2},
		{"tabel7.xlsx", csv, FormatCSV, 465},
		{"tabel7.txt", csv, FormatCSV, 465},
	} {
		tb := mustRead(t, tc.name, tc.data, "", Limits{})
		if tb.Format != tc.format || len(tb.Rows) != tc.rows {
			t.Errorf("%s: format %s, %d rows", tc.name, tb.Format, len(tb.Rows))
		}
	}
	// Named .xlsx, neither a workbook nor CSV: the message says both.
	mustFail(t, "book.xlsx", []byte("id,name\n1,\"open\n"), Limits{}, "named .xlsx but not a workbook", "not readable as CSV")
}

func TestReadNotAFile(t *testing.T) {
	mustFail(t, "empty.csv", nil, Limits{}, "empty.csv is empty")
	mustFail(t, "blank.csv", []byte(" \r\n\t\n"), Limits{}, "is empty")
	mustFail(t, "doc.csv", []byte("%PDF-1.7\n..."), Limits{}, "a PDF document")
	mustFail(t, "data.csv", []byte("id,name\x00\x01\x02\n"), Limits{}, "binary")
	mustFail(t, "data.csv", []byte{0x1F, 0x8B, 8, 0}, Limits{}, "gzip")
	mustFail(t, "empty.xlsx", []byte("PK\x05\x06"+strings.Repeat("\x00", 18)), Limits{}, "zip")
	mustFail(t, "x.xls", oleMagic, Limits{}, "shorter than its header")
}

func TestReadLimits(t *testing.T) {
	for _, tc := range []struct {
		name string
		data string
		lim  Limits
		want string
	}{
		{"bytes", "id\n1\n", Limits{MaxBytes: 3}, "the limit is 3 bytes"},
		{"rows", "id\n1\n2\n3\n", Limits{MaxRows: 3}, "more than 3 rows"},
		{"columns", "a,b,c,d\n1,2,3,4\n", Limits{MaxCols: 3}, "4 columns; the limit is 3"},
		{"cell length", "id,name\n1," + strings.Repeat("ø", 11) + "\n", Limits{MaxCellLen: 10}, "row 2, column B: the cell holds more than 10 characters"},
		{"cells", "a,b\n1,2\n3,4\n", Limits{MaxCells: 5}, "more than 5 cells"},
		{"cells between values", "a,b,c\n,,1\n,,2\n", Limits{MaxCells: 7}, "more than 7 cells"},
		{"fields", "a,b\n1" + strings.Repeat(",", 20000) + "x\n", Limits{}, "line 2 holds more than 16384 fields"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := mustFail(t, "f.csv", []byte(tc.data), tc.lim, tc.want)
			if !errors.Is(err, ErrLimit) {
				t.Errorf("not a limit error: %v", err)
			}
		})
	}
	// At the limits exactly: accepted. Characters, not bytes, are counted.
	mustRead(t, "f.csv", []byte("id,name\n1,"+strings.Repeat("ø", 10)+"\n"), "", Limits{MaxCellLen: 10, MaxRows: 2, MaxCols: 2})
	if d := DefaultLimits(); d.MaxBytes != 32<<20 || d.MaxRows != 200_000 || d.MaxCols != 200 || d.MaxCellLen != 32_768 {
		t.Errorf("defaults %+v", d)
	}
	// Trailing empty columns do not count against MaxCols.
	mustRead(t, "f.csv", []byte("a,b,,,,\n1,2,,,,\n"), "", Limits{MaxCols: 2})
}

func TestSample(t *testing.T) {
	tb := mustRead(t, "f.csv", []byte("id,name,a1a3\n1,a\n2,b,3\n"), "", Limits{})
	got := tb.Sample(10)
	if len(got) != 2 || len(got[0]) != 3 || got[0][2] != "" || got[1][2] != "3" {
		t.Errorf("sample %q", got)
	}
	if len(tb.Sample(0)) != 0 || len(tb.Sample(-1)) != 0 {
		t.Error("empty sample")
	}
}

func TestColumnLetters(t *testing.T) {
	for i, want := range map[int]string{0: "A", 25: "Z", 26: "AA", 27: "AB", 701: "ZZ", 702: "AAA", 16383: "XFD"} {
		if got := columnLetters(i); got != want {
			t.Errorf("columnLetters(%d) = %q, want %q", i, got, want)
		}
	}
}

func TestClassifyNumbers(t *testing.T) {
	for _, tc := range []struct {
		s    string
		dec  byte
		v    float64
		ok   bool
		ambi bool
	}{
		{"309,1", '.', 309.1, true, false},
		{"309.1", ',', 309.1, true, false},
		{"1,234", ',', 1.234, true, false},
		{"1,234", '.', 0, false, true},
		{"0,234", '.', 0.234, true, false},
		{"-12.345", ',', 0, false, true},
		{"12345,678", '.', 12345.678, true, false},
		{"1.5e3", ',', 1500, true, false},
		{",5", '.', 0.5, true, false},
		{"5.", '.', 5, true, false},
		{"1e999", '.', 0, false, false},
		{"1.2.3", '.', 0, false, false},
		{"1,2,3", ',', 0, false, false},
		{"+", '.', 0, false, false},
		{"e5", '.', 0, false, false},
		{"1e", '.', 0, false, false},
		{"Inf", '.', 0, false, false},
		{"0x10", '.', 0, false, false},
		{"−4", '.', -4, true, false},
		{"-0", '.', 0, true, false},
	} {
		v, ok, ambi := parseNumber(tc.s, tc.dec)
		if v != tc.v || ok != tc.ok || ambi != tc.ambi {
			t.Errorf("parseNumber(%q, %c) = %v %v %v, want %v %v %v", tc.s, tc.dec, v, ok, ambi, tc.v, tc.ok, tc.ambi)
		}
	}
	for in, want := range map[float64]float64{309.10000000000002: 309.1, 0.30000000000000004: 0.3, 0.999999999999999: 1,
		12873.63303844:  12873.6330384, // 13 significant digits: rounded too
		123456789012345: 123456789012345, 2.7104000000000007e-05: 2.7104e-05} {
		if got := clean(in); got != want {
			t.Errorf("clean(%v) = %v, want %v", in, got, want)
		}
	}
}

// TestKeepRowsReadsAsTheWholeTable: a table read for a preview (KeepRows)
// holds only its first rows, and says of the file what the whole table
// says: the same headers (a row past the kept ones wider than the header
// included), the same row count, the same decimal separator (decided by
// rows past the kept ones); every limit still applies to every row.
func TestKeepRowsReadsAsTheWholeTable(t *testing.T) {
	var b strings.Builder
	b.WriteString("id;name;a1a3\n")
	for i := range 5000 {
		switch {
		case i < 10:
			fmt.Fprintf(&b, "%d;n%d;1.5\n", i, i) // dots in the kept rows
		case i == 4000:
			fmt.Fprintf(&b, "%d;n%d;2,5;extra\n", i, i) // a fourth column, past the kept rows
		default:
			fmt.Fprintf(&b, "%d;n%d;2,5\n", i, i) // commas in the rest
		}
	}
	csvData := []byte(b.String())
	var rows []string
	for i := 1; i <= 40; i++ {
		rows = append(rows, rowXML(i, fmt.Sprint("id", i), "n:"+fmt.Sprint(i)))
	}
	xlsxData := buildXLSX(t, []xlsxSheet{{"S", strings.Join(rows, "")}}, nil)
	files := []struct {
		name string
		data []byte
	}{
		{"gen.csv", csvData},
		{"gen.xlsx", xlsxData},
		{"br25-tabel7-2025.xlsx", shareddata.Read(t, "data", "dkbr", "br25-tabel7-2025.xlsx")},
		{"br18-tabel7-201222.csv", shareddata.Read(t, "data", "dkbr", "br18-tabel7-201222.csv")},
		{"lcabyg-library-biff8.xls", shareddata.Read(t, "data", "dkbr", "lcabyg-library-biff8.xls")},
	}
	for _, f := range files {
		whole := mustRead(t, f.name, f.data, "", Limits{})
		kept := mustRead(t, f.name, f.data, "", Limits{KeepRows: 10})
		if len(kept.Rows) != min(10, len(whole.Rows)) || kept.Total != len(whole.Rows) || whole.Total != len(whole.Rows) {
			t.Errorf("%s: kept %d rows of %d (whole: %d, total %d)", f.name, len(kept.Rows), kept.Total, len(whole.Rows), whole.Total)
		}
		if !reflect.DeepEqual(kept.Headers, whole.Headers) || kept.DecimalSeparator != whole.DecimalSeparator ||
			!reflect.DeepEqual(kept.Rows, whole.Rows[:len(kept.Rows)]) || !reflect.DeepEqual(kept.Sample(10), whole.Sample(10)) {
			t.Errorf("%s: kept %q %q, whole %q %q", f.name, kept.Headers, kept.DecimalSeparator, whole.Headers, whole.DecimalSeparator)
		}
	}
	if tb := mustRead(t, "gen.csv", csvData, "", Limits{KeepRows: 10}); tb.DecimalSeparator != "mixed" || len(tb.Headers) != 4 {
		t.Errorf("gen.csv: %q, headers %q", tb.DecimalSeparator, tb.Headers)
	}
	mustFail(t, "gen.csv", csvData, Limits{KeepRows: 10, MaxRows: 4000}, "more than 4000 rows")
	mustFail(t, "gen.csv", []byte(strings.Replace(b.String(), "n4999", strings.Repeat("x", 40), 1)), Limits{KeepRows: 10, MaxCellLen: 30}, "row 5001, column B")
	p := Parser{}
	ft, err := p.Parse("gen.csv", csvData, "")
	if err != nil || ft.Rows != 5000 || len(ft.Sample) != previewSample || ft.DecimalSeparator != "mixed" {
		t.Errorf("preview: %d rows, %d sampled, %q, %v", ft.Rows, len(ft.Sample), ft.DecimalSeparator, err)
	}
}
