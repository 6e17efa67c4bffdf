package filereader

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/climatesearch/climatesearch/core"
	"github.com/xuri/excelize/v2"
)

const (
	// maxZipEntries bounds the parts of an xlsx package.
	maxZipEntries = 10_000
	// excelMaxRows is the most rows a worksheet can have; a row number above
	// it is a hostile file (excelize would iterate up to it).
	excelMaxRows = 1 << 20
)

// readXLSX reads one sheet of an Office Open XML workbook with excelize:
// raw cell values (numbers as stored, not as formatted), formula cells by
// their cached value (never evaluated, never their formula text).
func readXLSX(data []byte, sheet string, lim Limits) (t *Table, err error) {
	if err := checkZip(data, lim); err != nil {
		return nil, err
	}
	// excelize has panicked on malformed packages before; a hostile upload
	// must not take the process down.
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, core.Invalidf("the xlsx workbook is malformed (reader failed: %v)", r)
		}
	}()
	f, err := excelize.OpenReader(bytes.NewReader(data), excelize.Options{
		RawCellValue:   true,
		UnzipSizeLimit: lim.MaxUnzipBytes,
		// Equal limits: no part is ever spilled to a temporary file; what
		// is held in memory is bounded by checkZip.
		UnzipXMLSizeLimit: lim.MaxUnzipBytes,
	})
	if err != nil {
		return nil, core.Invalidf("not a readable xlsx workbook (truncated or corrupt?): %v", err)
	}
	defer f.Close()
	sheets := f.GetSheetList()
	if len(sheets) == 0 {
		return nil, core.Invalidf("the workbook has no sheet")
	}
	name, err := pickSheet(sheets, sheet)
	if err != nil {
		return nil, err
	}
	rows, err := f.Rows(name)
	if err != nil {
		return nil, core.Invalidf("sheet %q cannot be read: %v", name, err)
	}
	defer rows.Close()
	g := &grid{lim: lim}
	for n := 1; rows.Next(); n++ {
		if n > excelMaxRows {
			return nil, core.Invalidf("sheet %q: row numbers beyond Excel's %d rows", name, excelMaxRows)
		}
		texts, err := rows.Columns(excelize.Options{RawCellValue: true})
		if err != nil {
			return nil, core.Invalidf("sheet %q row %d cannot be read: %v", name, n, err)
		}
		cells := make([]Cell, len(texts))
		last := 0
		for i, s := range texts {
			if err := g.checkLen(n, i, s); err != nil {
				return nil, withSheet(name, err)
			}
			cells[i] = workbookCell(s)
			if cells[i].Text != "" {
				last = i + 1
			}
		}
		if err := g.add(n, cells[:last]); err != nil {
			return nil, withSheet(name, err)
		}
	}
	if err := rows.Error(); err != nil {
		return nil, core.Invalidf("sheet %q cannot be read: %v", name, err)
	}
	t, err = g.table(FormatXLSX, fmt.Sprintf("sheet %q", name))
	if err != nil {
		return nil, err
	}
	t.Sheets, t.Sheet, t.DecimalSeparator = sheets, name, "."
	return t, nil
}

// workbookCell reads a workbook value: a raw number ("309.10000000000002",
// "1.2E-05") becomes a cleaned number with its shortest text; a text stays
// text, and reads as a number when it is one ("309,1" too, unless it could
// be a thousands separator).
func workbookCell(s string) Cell {
	s = core.CleanText(s)
	c := Cell{Text: s}
	if v, ok, _ := parseNumber(s, '.'); ok {
		c.Num, c.IsNum = v, true
		if f, _ := classify(s); f != commaDecimal {
			c.Text = formatNum(v)
		}
	}
	return c
}

// withSheet prefixes a grid error with the sheet name, keeping its kind.
func withSheet(sheet string, err error) error {
	if ce, ok := err.(*core.Error); ok {
		ce.Msg = fmt.Sprintf("sheet %q: %s", sheet, ce.Msg)
		return ce
	}
	return fmt.Errorf("sheet %q: %w", sheet, err)
}

// pickSheet resolves the requested sheet: empty means the first; else an
// exact name, else the only case-insensitive match.
func pickSheet(sheets []string, want string) (string, error) {
	want = strings.TrimSpace(want)
	if want == "" {
		return sheets[0], nil
	}
	for _, s := range sheets {
		if s == want {
			return s, nil
		}
	}
	found := ""
	for _, s := range sheets {
		if strings.EqualFold(strings.TrimSpace(s), want) {
			if found != "" {
				found = ""
				break
			}
			found = s
		}
	}
	if found != "" {
		return found, nil
	}
	return "", core.Invalidf("no sheet named %q; the workbook has %s", want, quoteList(sheets, 20))
}

func quoteList(xs []string, n int) string {
	var b strings.Builder
	for i, x := range xs {
		if i == n {
			fmt.Fprintf(&b, " and %d more", len(xs)-n)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", x)
	}
	return b.String()
}

// checkZip inspects the package before excelize inflates it: the declared
// sizes bound what inflating may produce (archive/zip refuses an entry that
// inflates beyond its declared size), so a zip bomb is refused here without
// inflating a byte.
func checkZip(data []byte, lim Limits) error {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return core.Invalidf("not a readable xlsx workbook (truncated or corrupt zip): %v", err)
	}
	if len(zr.File) > maxZipEntries {
		return limitErr("the workbook package holds %d parts; the limit is %d", len(zr.File), maxZipEntries)
	}
	var total uint64
	hasWorkbook, hasTypes := false, false
	for _, zf := range zr.File {
		size := zf.UncompressedSize64
		total += size
		if size > uint64(lim.MaxUnzipBytes) || total > uint64(lim.MaxUnzipBytes) {
			return limitErr("the workbook inflates to more than %d bytes (a zip bomb?); the limit is %d bytes", lim.MaxUnzipBytes, lim.MaxUnzipBytes)
		}
		name := strings.ToLower(strings.ReplaceAll(zf.Name, "\\", "/"))
		switch name {
		case "xl/sharedstrings.xml":
			if size > uint64(lim.MaxUnzipBytes/4) {
				return limitErr("the workbook's shared-string table inflates to %d bytes; the limit is %d bytes", size, lim.MaxUnzipBytes/4)
			}
		case "xl/workbook.xml":
			hasWorkbook = true
		case "[content_types].xml":
			hasTypes = true
		case "mimetype":
			return core.Invalidf("an OpenDocument file (.ods?) is not supported: save it as .xlsx or .csv")
		}
	}
	if !hasWorkbook || !hasTypes {
		return core.Invalidf("a zip archive but not an xlsx workbook (no xl/workbook.xml): save the sheet as .xlsx or .csv")
	}
	// Inflate every part once, discarding the bytes: archive/zip stops an
	// entry at its declared size and checks its CRC, and excelize ignores
	// both errors (a lying or corrupt part would be read short, silently).
	// The declared sizes were bounded above, so this is bounded too.
	for _, zf := range zr.File {
		if err := checkEntry(zf); err != nil {
			return core.Invalidf("the workbook part %s is corrupt (its size or checksum does not match): %v", zf.Name, err)
		}
	}
	return nil
}

func checkEntry(zf *zip.File) error {
	rc, err := zf.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = io.Copy(io.Discard, rc)
	return err
}
