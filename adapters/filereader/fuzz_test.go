package filereader

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/test/shareddata"
)

// fuzzLimits keep each input cheap; the invariants hold for any limits.
var fuzzLimits = Limits{MaxBytes: 1 << 20, MaxRows: 2000, MaxCols: 50, MaxCellLen: 2000, MaxCells: 20_000, MaxUnzipBytes: 8 << 20}

// checkTable asserts what every table Read returns must satisfy.
func checkTable(t *testing.T, tb *Table, err error, lim Limits) {
	t.Helper()
	if err != nil {
		if core.KindOf(err) != core.KindInvalid || err.Error() == "" {
			t.Fatalf("error of kind %v: %v", core.KindOf(err), err)
		}
		if tb != nil {
			t.Fatal("a table with an error")
		}
		return
	}
	if tb == nil || len(tb.Headers) == 0 || len(tb.Headers) > lim.MaxCols || len(tb.Rows)+1 > lim.MaxRows {
		t.Fatalf("table %+v", tb)
	}
	seen := map[string]bool{}
	for _, h := range tb.Headers {
		k := strings.ToLower(h)
		if h == "" || seen[k] {
			t.Fatalf("header %q empty or repeated in %q", h, tb.Headers)
		}
		seen[k] = true
	}
	last := tb.HeaderRow
	for _, r := range tb.Rows {
		if r.Num <= last || len(r.Cells) == 0 || len(r.Cells) > len(tb.Headers) {
			t.Fatalf("row %d after %d with %d cells (%d headers)", r.Num, last, len(r.Cells), len(tb.Headers))
		}
		last = r.Num
		for _, c := range r.Cells {
			if utf8.RuneCountInString(c.Text) > lim.MaxCellLen || !utf8.ValidString(c.Text) {
				t.Fatalf("cell text %q", c.Text)
			}
			if c.IsNum && (math.IsNaN(c.Num) || math.IsInf(c.Num, 0)) {
				t.Fatalf("cell number %v", c.Num)
			}
		}
	}
	_ = tb.Sample(5)
}

func FuzzReadCSV(f *testing.F) {
	real := shareddata.Read(f, "data", "dkbr", "br18-tabel7-201222.csv")
	lines := strings.SplitAfter(string(real), "\n")
	f.Add([]byte(strings.Join(lines[:12], "")))
	f.Add([]byte("id;name;a1a3\r\n#G1;\"Beton,\r\nC25\";309,1\r\n#G2;Stål;-\r\n"))
	f.Add([]byte("\xef\xbb\xbfid\tname\ta1a3\n1\tGr\xe6s\t1.234\n"))
	f.Add([]byte("sep=|\nid|a1a3\n1|1e5\n"))
	f.Add([]byte("\xff\xfei\x00d\x00,\x00x\x00\n\x001\x00,\x002\x00\n\x00"))
	f.Add([]byte("a,a,,A\n\"x\"\"y\",1,2,3,4,5\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tb, err := Read("f.csv", data, "", fuzzLimits)
		checkTable(t, tb, err, fuzzLimits)
	})
}

// FuzzReadXLSX reads whole files (inputs starting with PK) and, to reach
// past the zip checksums into excelize and the cell handling, sheet XML
// wrapped in a valid package (any other input).
func FuzzReadXLSX(f *testing.F) {
	f.Add(buildXLSX(f, []xlsxSheet{{name: "S", xml: rowXML(1, "id", "a1a3", "name") + rowXML(2, "#G1", "f:B3*2|618.2", "fs:X|Beton") +
		rowXML(3, "#G2", "n:309.10000000000002", "Stål")}}, nil))
	f.Add(buildXLSX(f, []xlsxSheet{{name: "A", xml: `<row r="1"><c r="A1" t="s"><v>0</v></c><c r="C1" t="s"><v>1</v></c></row>`},
		{name: "B", xml: ""}}, []string{"id", "a1a3"}))
	f.Add([]byte(rowXML(1, "id", "a1a3") + rowXML(2, "#G1", "n:1.5E-3") + `<row r="7"><c r="C7" t="b"><v>1</v></c><c r="D7" t="e"><v>#N/A</v></c></row>`))
	f.Add([]byte(`<row r="1"><c r="A1" t="s"><v>1</v></c><c r="B1" t="s"><v>0</v></c></row><row><c t="d"><v>2024-01-01</v></c></row>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !bytes.HasPrefix(data, []byte("PK")) {
			if len(data) > 1<<16 {
				return
			}
			data = zipParts(t, xlsxParts([]xlsxSheet{{name: "S", xml: string(data)}}, []string{"id", "a1a3"}))
		}
		tb, err := Read("f.xlsx", data, "", fuzzLimits)
		checkTable(t, tb, err, fuzzLimits)
	})
}

// FuzzReadXLS reads whole files (inputs starting with the OLE2 magic) and,
// to reach the BIFF8 parser directly, any other input as the Workbook
// stream of a valid container.
func FuzzReadXLS(f *testing.F) {
	// The real lcabyg workbook (222 KB) is read by TestLCAbygXLS; as a seed
	// it makes every new input slow to minimise, so the seeds are small.
	cont := cat(rec(recSST, cat(u32(2), u32(2), u16(5), []byte{0}, []byte("ab"))), rec(recContinue, cat([]byte{1}, []byte{'c', 0, 'd', 0, 'e', 0}, u16(2), []byte{0x0C}, u16(1), u32(2), []byte("id"), u32(0), []byte{9, 9})))
	sheets := []xlsSheet{{name: "S", cells: [][]byte{labelSST(0, 0, 0), labelSST(0, 1, 1), label(1, 0, "#G1"),
		formulaSpecial(1, 1, 0, 0), rec(recString, xlString16("ø")), label(2, 0, "#G2"), number(2, 1, 1.5),
		rec(recMulRK, cat(u16(3), u16(0), u16(15), u32(0x3FF80000), u16(15), u32(4), u16(1)))}}}
	f.Add(buildXLS(sheets, cont))
	f.Add(biffWorkbook(sheets, cont))
	var cells [][]byte
	for i := 0; i < 300; i++ {
		cells = append(cells, label(i, 0, "row"), number(i, 1, float64(i)))
	}
	f.Add(buildXLS([]xlsSheet{{name: "Big", cells: cells}, {name: "Other", cells: [][]byte{label(0, 0, "x")}}}, sstRecord("a", "b")))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !bytes.HasPrefix(data, oleMagic) {
			data = buildCFB(cfbStream{"Workbook", data})
		}
		tb, err := Read("f.xls", data, "", fuzzLimits)
		checkTable(t, tb, err, fuzzLimits)
		if err == nil && len(tb.Sheets) > 1 {
			tb, err = Read("f.xls", data, tb.Sheets[len(tb.Sheets)-1], fuzzLimits)
			checkTable(t, tb, err, fuzzLimits)
		}
	})
}

// FuzzMap maps a CSV with a column map written as field=header;field=header.
func FuzzMap(f *testing.F) {
	real := shareddata.Read(f, "data", "dkbr", "br18-tabel7-201222.csv")
	lines := strings.SplitAfter(string(real), "\n")
	t7 := "id=Sorterings ID;name=Navn DK;name_de_en=Navn DE/ENG;a1a3=Global Opvarmning, modul A1-A3;unit=Deklareret enhed (FU);conversion_value=Masse faktor;origin=Url (link)"
	f.Add([]byte(strings.Join(lines[:12], "")), t7)
	f.Add([]byte("id,name,a1a3,unit,mass,mu\n#G1,a,1,M3,470,kg/m3\n#G2,b,#G1,#G1,#G3,\n#G3,c,-,stk.,#G2,kg\n#G1,a,1,m³,470,kg/m³\n"),
		"id=id;name=name;a1a3=a1a3;unit=unit;conversion_value=mass;conversion_unit=mu")
	f.Add([]byte("id;name;a1a3\n1;=A1;1,5\n1;b;2\n;c;x\n"), "id=id;name=name;a1a3=a1a3;colour=name")
	f.Fuzz(func(t *testing.T, data []byte, spec string) {
		tb, err := Read("f.csv", data, "", fuzzLimits)
		if err != nil {
			return
		}
		m := map[string]string{}
		for _, kv := range strings.Split(spec, ";") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				m[k] = v
			}
		}
		rep, err := Map(tb, core.DKBR, m, "BR25")
		if len(rep.Problems) > MaxProblems || rep.ProblemCount < len(rep.Problems) || len(rep.Notes) > MaxProblems {
			t.Fatalf("report %+v", rep)
		}
		if err != nil {
			if core.KindOf(err) != core.KindInvalid || len(rep.Problems) == 0 || len(rep.Release.Resources) != 0 {
				t.Fatalf("refused: %v %+v", err, rep)
			}
			return
		}
		rel := rep.Release
		if rel.Catalog != core.DKBR || rel.Origin != core.OriginFile || len(rel.Resources) == 0 || rep.Resources != len(rel.Resources) ||
			rep.Rows != rep.Resources+rep.Collapsed {
			t.Fatalf("release %+v report %+v", rel, rep)
		}
		ids := map[string]bool{}
		for _, r := range rel.Resources {
			if r.ID == "" || ids[r.ID] || strings.ContainsAny(r.ID, ":/?") {
				t.Fatalf("id %q", r.ID)
			}
			ids[r.ID] = true
			for _, p := range []*float64{r.A1A3, r.A1A3Conservative, r.A4, r.A51, r.ConservativeFactor, r.WasteFactor, r.BiogenicCarbon} {
				if p != nil && (math.IsNaN(*p) || math.IsInf(*p, 0)) {
					t.Fatalf("number %v", *p)
				}
			}
			for k, v := range r.Conversions {
				if n, d, ok := strings.Cut(k, "/"); !ok || n == "" || d == "" || !(v > 0) {
					t.Fatalf("conversion %q=%v", k, v)
				}
			}
		}
	})
}
