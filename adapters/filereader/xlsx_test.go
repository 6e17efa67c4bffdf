package filereader

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"hash/crc32"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// Numbers are read as stored, not as the cell format displays them; formula
// cells give their cached value and never their formula text.
func TestXLSXRawValuesAndFormulas(t *testing.T) {
	f := excelize.NewFile()
	defer f.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.SetSheetRow("Sheet1", "A1", &[]any{"id", "a1a3", "name"}))
	must(f.SetSheetRow("Sheet1", "A2", &[]any{"#G1", 309.10000000000002, "Beton"}))
	must(f.SetSheetRow("Sheet1", "A3", &[]any{"#G2", 0.0000123, "Stål"}))
	style, err := f.NewStyle(&excelize.Style{NumFmt: 2}) // "0.00"
	must(err)
	must(f.SetCellStyle("Sheet1", "B2", "B3", style))
	var buf bytes.Buffer
	must(f.Write(&buf))
	tb := mustRead(t, "formatted.xlsx", buf.Bytes(), "", Limits{})
	if c := tb.Rows[0].Cell(1); c.Text != "309.1" || c.Num != 309.1 {
		t.Errorf("309.10000000000002 formatted 0.00: %+v", c)
	}
	if c := tb.Rows[1].Cell(1); c.Num != 0.0000123 || c.Text != "0.0000123" {
		t.Errorf("0.0000123 formatted 0.00: %+v", c)
	}

	// Formulas by hand: cached values present, absent, text, boolean, error.
	data := buildXLSX(t, []xlsxSheet{{name: "Data", xml: rowXML(1, "id", "a1a3", "name", "flag") +
		rowXML(2, "#G1", "f:B3*2|618.2", "fs:CONCAT(\"Be\",\"ton\")|Beton", "") +
		`<row r="3"><c r="A3" t="inlineStr"><is><t>#G2</t></is></c><c r="B3"><f>SUM(1,2)</f></c>` +
		`<c r="C3" t="b"><f>TRUE()</f><v>1</v></c><c r="D3" t="e"><f>1/0</f><v>#DIV/0!</v></c></row>`}}, nil)
	tb = mustRead(t, "formulas.xlsx", data, "", Limits{})
	got := tb.Sample(2)
	// A boolean reads as its raw value, 1.
	want := [][]string{{"#G1", "618.2", "Beton", ""}, {"#G2", "", "1", "#DIV/0!"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("formula cells %q, want %q", got, want)
	}
	for _, r := range tb.Rows {
		for _, c := range r.Cells {
			if strings.ContainsAny(c.Text, "*(") {
				t.Errorf("formula text leaked: %q", c.Text)
			}
		}
	}
}

func TestXLSXSheets(t *testing.T) {
	data := buildXLSX(t, []xlsxSheet{
		{name: "Intro", xml: rowXML(1, "Read me")},
		{name: "Tabel 7", xml: rowXML(1, "", "") + rowXML(3, "id", "a1a3") + rowXML(4, "#G1", "n:1.5") + rowXML(5) + rowXML(7, "#G2", "n:2")},
		{name: "Empty", xml: ""},
	}, nil)
	tb := mustRead(t, "book.xlsx", data, "", Limits{})
	if tb.Sheet != "Intro" || !reflect.DeepEqual(tb.Sheets, []string{"Intro", "Tabel 7", "Empty"}) || len(tb.Rows) != 0 {
		t.Fatalf("first sheet: %q %q %d rows", tb.Sheet, tb.Sheets, len(tb.Rows))
	}
	tb = mustRead(t, "book.xlsx", data, "tabel 7", Limits{})
	if tb.Sheet != "Tabel 7" || tb.HeaderRow != 3 || len(tb.Rows) != 2 || tb.Rows[1].Num != 7 {
		t.Fatalf("named sheet: %q header %d rows %+v", tb.Sheet, tb.HeaderRow, tb.Rows)
	}
	_, err := Read("book.xlsx", data, "Tabel 8", Limits{})
	if err == nil || !strings.Contains(err.Error(), `no sheet named "Tabel 8"`) || !strings.Contains(err.Error(), `"Tabel 7"`) {
		t.Errorf("missing sheet: %v", err)
	}
	_, err = Read("book.xlsx", data, "Empty", Limits{})
	if err == nil || !strings.Contains(err.Error(), "no rows") {
		t.Errorf("empty sheet: %v", err)
	}
}

// A workbook holding only headers reads (a preview can show them); Map
// refuses it.
func TestXLSXOnlyHeaders(t *testing.T) {
	data := buildXLSX(t, []xlsxSheet{{name: "S", xml: rowXML(1, "id", "name", "a1a3")}}, nil)
	tb := mustRead(t, "headers.xlsx", data, "", Limits{})
	if len(tb.Rows) != 0 || len(tb.Headers) != 3 || len(tb.Sample(5)) != 0 {
		t.Fatalf("headers %q rows %d", tb.Headers, len(tb.Rows))
	}
	_, err := Map(tb, "dkbr", map[string]string{"id": "id", "name": "name", "a1a3": "a1a3"}, "BR25")
	if err == nil || !strings.Contains(err.Error(), "no data rows") {
		t.Errorf("Map: %v", err)
	}
}

func TestXLSXSharedStrings(t *testing.T) {
	data := buildXLSX(t, []xlsxSheet{{name: "S", xml: `<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>` +
		`<row r="2"><c r="A2" t="s"><v>2</v></c><c r="B2" t="s"><v>3</v></c></row>`}}, []string{"id", "a1a3", "#G1", "309,1"})
	tb := mustRead(t, "sst.xlsx", data, "", Limits{})
	// A number stored as text with a decimal comma still reads as a number.
	if c := tb.Rows[0].Cell(1); c.Text != "309,1" || !c.IsNum || c.Num != 309.1 {
		t.Errorf("text number %+v", c)
	}
}

func TestXLSXTruncated(t *testing.T) {
	data := buildXLSX(t, []xlsxSheet{{name: "S", xml: rowXML(1, "id") + rowXML(2, "x")}}, nil)
	for _, n := range []int{len(data) / 2, len(data) - 10, 30} {
		mustFail(t, "cut.xlsx", data[:n], Limits{}, "xlsx")
	}
}

// A zip bomb: a 1 GiB sheet of zeros compressed to about a megabyte. Its
// declared size refuses it before anything is inflated.
func TestXLSXZipBomb(t *testing.T) {
	bomb := bombXLSX(t, 1<<30, 1<<30)
	if len(bomb) > 2<<20 {
		t.Fatalf("bomb is %d bytes", len(bomb))
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := mustFail(t, "bomb.xlsx", bomb, Limits{}, "zip bomb")
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrLimit) {
		t.Errorf("not a limit error: %v", err)
	}
	t.Logf("refusing the bomb allocated %d KB", (after.TotalAlloc-before.TotalAlloc)>>10)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("refusing the bomb allocated %d MB", alloc>>20)
	}

	// A lying bomb declares 4 KiB: inflating stops there (archive/zip
	// checks the declared size), so it is refused as corrupt, not by memory.
	// It is built before measuring: building it allocates megabytes.
	liar := bombXLSX(t, 1<<30, 4096)
	runtime.GC()
	runtime.ReadMemStats(&before)
	mustFail(t, "liar.xlsx", liar, Limits{}, "corrupt")
	runtime.ReadMemStats(&after)
	t.Logf("refusing the lying bomb allocated %d KB", (after.TotalAlloc-before.TotalAlloc)>>10)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("refusing the lying bomb allocated %d MB", alloc>>20)
	}
	// A part whose bytes do not match its checksum.
	ok := buildXLSX(t, []xlsxSheet{{name: "S", xml: rowXML(1, "id") + rowXML(2, "x")}}, nil)
	mustFail(t, "crc.xlsx", flipCRC(t, ok, "xl/worksheets/sheet1.xml"), Limits{}, "corrupt")
}

// bombXLSX is a workbook whose sheet inflates to size bytes of zeros and
// declares declared bytes.
func bombXLSX(t *testing.T, size, declared uint64) []byte {
	t.Helper()
	return repeatedSheetXLSX(t, nil, make([]byte, 1<<20), int(size>>20), nil, &declared)
}

// repeatedSheetXLSX is a workbook whose sheet part is head, then body
// repeated n times, then tail; its deflate stream is made of independent
// blocks (each compressed once), so a huge sheet is cheap to make. declared,
// when set, replaces the true uncompressed size in the zip headers.
func repeatedSheetXLSX(t *testing.T, head, body []byte, n int, tail []byte, declared *uint64) []byte {
	t.Helper()
	block := func(b []byte) []byte {
		var buf bytes.Buffer
		fw, err := flate.NewWriter(&buf, flate.BestSpeed)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(b)
		fw.Flush() // a sync flush: whole, non-final blocks
		return buf.Bytes()
	}
	var final bytes.Buffer
	fw, _ := flate.NewWriter(&final, flate.BestSpeed)
	fw.Close()
	var comp bytes.Buffer
	crc := crc32.NewIEEE()
	comp.Write(block(head))
	crc.Write(head)
	b := block(body)
	for i := 0; i < n; i++ {
		comp.Write(b)
		crc.Write(body)
	}
	comp.Write(block(tail))
	crc.Write(tail)
	comp.Write(final.Bytes())
	size := uint64(len(head)) + uint64(n)*uint64(len(body)) + uint64(len(tail))
	if declared != nil {
		size = *declared
	}

	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, p := range xlsxParts([]xlsxSheet{{name: "S", xml: rowXML(1, "id")}}, nil) {
		if p.name == "xl/worksheets/sheet1.xml" {
			w, err := zw.CreateRaw(&zip.FileHeader{Name: p.name, Method: zip.Deflate, CRC32: crc.Sum32(),
				CompressedSize64: uint64(comp.Len()), UncompressedSize64: size})
			if err != nil {
				t.Fatal(err)
			}
			w.Write(comp.Bytes())
			continue
		}
		w, _ := zw.Create(p.name)
		w.Write(p.body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// flipCRC changes the stored checksum of one entry.
func flipCRC(t *testing.T, data []byte, name string) []byte {
	t.Helper()
	out := append([]byte(nil), data...)
	n := 0
	for _, sig := range []struct {
		magic                 string
		crcOff, nOff, nameOff int
	}{{"PK\x03\x04", 14, 26, 30}, {"PK\x01\x02", 16, 28, 46}} {
		for i := 0; ; {
			j := bytes.Index(out[i:], []byte(sig.magic))
			if j < 0 {
				break
			}
			p := i + j
			nl := int(out[p+sig.nOff]) | int(out[p+sig.nOff+1])<<8
			if p+sig.nameOff+nl <= len(out) && string(out[p+sig.nameOff:p+sig.nameOff+nl]) == name {
				out[p+sig.crcOff] ^= 0xFF
				n++
			}
			i = p + 4
		}
	}
	if n == 0 {
		t.Fatal("entry not found")
	}
	return out
}

// A huge shared-string table is refused by its declared size.
func TestXLSXHugeSharedStrings(t *testing.T) {
	strs := make([]string, 20_000)
	for i := range strs {
		strs[i] = fmt.Sprintf("s%d", i)
	}
	data := buildXLSX(t, []xlsxSheet{{name: "S", xml: `<row r="1"><c r="A1" t="s"><v>0</v></c></row>`}}, strs)
	// About 0.9 MB of strings: more than a quarter of 1 MiB, less than all of it.
	mustFail(t, "sst.xlsx", data, Limits{MaxUnzipBytes: 1 << 20}, "shared-string table")
	// Under the default limits the same workbook reads.
	tb := mustRead(t, "sst.xlsx", data, "", Limits{})
	if tb.Headers[0] != "s0" {
		t.Errorf("headers %q", tb.Headers)
	}
}

// A million rows in a sheet are counted while streaming and refused at
// MaxRows, long before the end; a row number beyond Excel's limit is
// refused at once.
func TestXLSXMillionRows(t *testing.T) {
	// Rows without an r attribute follow one another: 1 + 100 x 9,999 + 1
	// rows make a million.
	row := `<row><c><v>1</v></c></row>`
	head := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>` +
		rowXML(1, "id", "a1a3")
	data := repeatedSheetXLSX(t, []byte(head), []byte(strings.Repeat(row, 9999)), 100, []byte(row+`</sheetData></worksheet>`), nil)
	if len(data) > 4<<20 {
		t.Fatalf("%d bytes", len(data))
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := mustFail(t, "rows.xlsx", data, Limits{MaxRows: 20_000}, "more than 20000 rows")
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrLimit) {
		t.Errorf("not a limit error: %v", err)
	}
	// The sheet XML is about 26 MB inflated; reading stops after 20,000 rows.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 400<<20 {
		t.Errorf("refusing allocated %d MB", alloc>>20)
	}
	far := buildXLSX(t, []xlsxSheet{{name: "S", xml: rowXML(1, "id") + `<row r="999999999999"><c r="A999999999999"><v>1</v></c></row>`}}, nil)
	if _, err := Read("far.xlsx", far, "", Limits{}); err == nil {
		t.Error("a row number beyond Excel's limit was accepted")
	}
	gap := buildXLSX(t, []xlsxSheet{{name: "S", xml: rowXML(1, "id") + `<row r="1048576"><c r="A1048576"><v>1</v></c></row>`}}, nil)
	tb := mustRead(t, "gap.xlsx", gap, "", Limits{})
	if len(tb.Rows) != 1 || tb.Rows[0].Num != 1048576 {
		t.Errorf("last Excel row: %+v", tb.Rows)
	}
}

func TestXLSXNotAWorkbook(t *testing.T) {
	ods := zipParts(t, []zipPart{{"mimetype", []byte("application/vnd.oasis.opendocument.spreadsheet")}, {"content.xml", []byte("<x/>")}})
	mustFail(t, "sheet.ods", ods, Limits{}, "OpenDocument")
	docx := zipParts(t, []zipPart{{"[Content_Types].xml", []byte("<Types/>")}, {"word/document.xml", []byte("<w/>")}})
	mustFail(t, "letter.docx", docx, Limits{}, "not an xlsx workbook")
	// A package whose workbook part is garbage.
	junk := zipParts(t, []zipPart{{"[Content_Types].xml", []byte("<Types/>")}, {"xl/workbook.xml", []byte("<<<<")}})
	mustFail(t, "junk.xlsx", junk, Limits{})
}
