package filereader

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/climatesearch/climatesearch/core"
)

// Formats of a Table.
const (
	FormatCSV  = "csv"
	FormatXLSX = "xlsx"
	FormatXLS  = "xls"
)

// Limits bound what Read accepts. A zero field takes its default.
type Limits struct {
	// MaxBytes bounds the file itself (default 32 MiB).
	MaxBytes int64
	// MaxRows bounds the non-blank rows of the sheet, header included
	// (default 200,000).
	MaxRows int
	// MaxCols bounds the columns of any row (default 200).
	MaxCols int
	// MaxCellLen bounds one cell, in characters (default 32,768; Excel's own
	// limit is 32,767).
	MaxCellLen int
	// MaxCells bounds the cells kept in memory, empty ones between values
	// included (default 2,000,000: about 80 MB; 200,000 rows of 10 columns).
	MaxCells int
	// MaxUnzipBytes bounds what an xlsx may inflate to, all parts together
	// (default 128 MiB); its shared-string table may take a quarter of it.
	MaxUnzipBytes int64
	// KeepRows, when positive, keeps only the header and the first KeepRows
	// rows below it in the Table (Total still counts them all, and every
	// limit still applies to every row): a preview of a million-row file
	// does not hold its million rows.
	KeepRows int
}

// Default limits.
const (
	DefaultMaxBytes      = 32 << 20
	DefaultMaxRows       = 200_000
	DefaultMaxCols       = 200
	DefaultMaxCellLen    = 32_768
	DefaultMaxCells      = 2_000_000
	DefaultMaxUnzipBytes = 128 << 20
)

// DefaultLimits returns the limits Read applies to zero fields.
func DefaultLimits() Limits { return Limits{}.withDefaults() }

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxRows <= 0 {
		l.MaxRows = DefaultMaxRows
	}
	if l.MaxCols <= 0 {
		l.MaxCols = DefaultMaxCols
	}
	if l.MaxCellLen <= 0 {
		l.MaxCellLen = DefaultMaxCellLen
	}
	if l.MaxCells <= 0 {
		l.MaxCells = DefaultMaxCells
	}
	if l.MaxUnzipBytes <= 0 {
		l.MaxUnzipBytes = DefaultMaxUnzipBytes
	}
	return l
}

// ErrLimit is wrapped by every error that reports an exceeded limit, so a
// caller can answer 413 instead of 400: errors.Is(err, ErrLimit).
var ErrLimit = errors.New("file exceeds a limit")

// Table is a file read as a grid of cells: one sheet of a workbook, or a
// CSV file. The header is the first non-blank row.
type Table struct {
	// Format is csv, xlsx or xls, detected from the content.
	Format string `json:"format"`
	// Sheets lists a workbook's sheets in order (nil for CSV).
	Sheets []string `json:"sheets,omitempty"`
	// Sheet is the sheet read (empty for CSV).
	Sheet string `json:"sheet,omitempty"`
	// HeaderRow is the 1-based row of the headers in the sheet or file.
	HeaderRow int `json:"header_row"`
	// Headers are the cleaned header texts, unique: an empty header becomes
	// "Column <letters>", a repeated one gets " (2)", " (3)" appended.
	Headers []string `json:"headers"`
	// Rows are the non-blank rows below the header (the first KeepRows of
	// them when the limits say so).
	Rows []Row `json:"-"`
	// Total counts the non-blank rows below the header, kept or not.
	Total int `json:"rows"`
	// Delimiter is the CSV field separator detected ("," ";" or "\t"; "|" too).
	Delimiter string `json:"delimiter,omitempty"`
	// DecimalSeparator is how numbers written as text separate decimals:
	// "." or ","; "mixed" when both unambiguous forms occur (each such cell
	// is read by its own form). Workbook numbers are binary and need none.
	DecimalSeparator string `json:"decimal_separator"`
	// Encoding of a CSV file: utf-8, utf-8-bom, windows-1252, utf-16le or
	// utf-16be (empty for workbooks, which are Unicode).
	Encoding string `json:"encoding,omitempty"`
}

// Row is one non-blank row: its 1-based row number in the sheet (for CSV,
// the line its record starts on) and its cells, column by column. Trailing
// empty cells are not stored.
type Row struct {
	Num   int
	Cells []Cell
}

// Cell returns the cell in column i, or an empty cell.
func (r Row) Cell(i int) Cell {
	if i < 0 || i >= len(r.Cells) {
		return Cell{}
	}
	return r.Cells[i]
}

// Cell is one value. Text is the display string (used for samples and text
// fields): a CSV cell as written, a workbook text as stored, a workbook
// number in its shortest form after float-artefact rounding. Never formula
// text: formula cells give their cached value. IsNum tells whether the cell
// reads as a number; Num is then its value, rounded to 12 significant
// digits unless it is a whole number (ids and codes stay exact).
type Cell struct {
	Text  string
	Num   float64
	IsNum bool
}

// Sample returns up to n rows as display strings, one per header, for a
// preview.
func (t *Table) Sample(n int) [][]string {
	if n > len(t.Rows) {
		n = len(t.Rows)
	}
	out := make([][]string, 0, max(n, 0))
	for _, r := range t.Rows[:max(n, 0)] {
		line := make([]string, len(t.Headers))
		for i := range line {
			line[i] = r.Cell(i).Text
		}
		out = append(out, line)
	}
	return out
}

// Column returns the index of a header: an exact match of the cleaned
// text, else the only case-insensitive match; -1 when none.
func (t *Table) Column(header string) int {
	h := cleanHeader(header)
	if h == "" {
		return -1
	}
	for i, x := range t.Headers {
		if x == h {
			return i
		}
	}
	found := -1
	for i, x := range t.Headers {
		if strings.EqualFold(x, h) {
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}

var (
	zipMagic = []byte("PK\x03\x04")
	oleMagic = []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}
)

// Read reads a CSV, XLSX or XLS file into a Table. The format is detected
// from the content (zip magic: xlsx; OLE2 magic: xls; text: CSV), so a file
// with the wrong extension still reads; the extension only sharpens error
// messages. sheet names the workbook sheet to read (empty: the first; CSV
// ignores it). Every failure is a core.KindInvalid error with a message an
// operator can act on; exceeded limits also wrap ErrLimit.
func Read(filename string, data []byte, sheet string, lim Limits) (*Table, error) {
	lim = lim.withDefaults()
	name := filepath.Base(strings.TrimSpace(filename))
	if name == "." || name == "/" {
		name = "the file"
	}
	if int64(len(data)) > lim.MaxBytes {
		return nil, limitErr("%s is %d bytes; the limit is %d bytes", name, len(data), lim.MaxBytes)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, core.Invalidf("%s is empty", name)
	}
	ext := strings.ToLower(filepath.Ext(name))
	var (
		t   *Table
		err error
	)
	switch {
	case bytes.HasPrefix(data, zipMagic):
		t, err = readXLSX(data, sheet, lim)
	case bytes.HasPrefix(data, oleMagic):
		t, err = readXLS(data, sheet, lim)
	default:
		if kind := binaryKind(data); kind != "" {
			return nil, core.Invalidf("%s is %s, not a CSV, XLSX or XLS file", name, kind)
		}
		t, err = readCSV(data, lim)
	}
	if err != nil {
		prefix := name + ": "
		if t == nil && (ext == ".xlsx" || ext == ".xls" || ext == ".xlsm") && !bytes.HasPrefix(data, zipMagic) && !bytes.HasPrefix(data, oleMagic) {
			prefix = fmt.Sprintf("%s: named %s but not a workbook (no xlsx or xls signature), and not readable as CSV either: ", name, ext)
		}
		var ce *core.Error
		if errors.As(err, &ce) {
			ce.Msg = prefix + ce.Msg
			return nil, ce
		}
		return nil, core.Invalidf("%s%v", prefix, err)
	}
	return t, nil
}

// binaryKind names content that is certainly not CSV text.
func binaryKind(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("%PDF")):
		return "a PDF document"
	case bytes.HasPrefix(data, []byte("PK\x05\x06")), bytes.HasPrefix(data, []byte("PK\x07\x08")):
		return "an empty or split zip archive"
	case bytes.HasPrefix(data, []byte{0x1F, 0x8B}):
		return "a gzip archive"
	case bytes.HasPrefix(data, []byte("\x89PNG")), bytes.HasPrefix(data, []byte{0xFF, 0xD8, 0xFF}):
		return "an image"
	case bytes.HasPrefix(data, []byte("{\\rtf")):
		return "an RTF document"
	}
	if bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || bytes.HasPrefix(data, []byte{0xFE, 0xFF}) {
		return "" // UTF-16 text: NUL bytes are expected
	}
	head := data[:min(len(data), 8192)]
	if bytes.IndexByte(head, 0) >= 0 {
		return "a binary file"
	}
	return ""
}

func limitErr(format string, args ...any) error {
	return &core.Error{Kind: core.KindInvalid, Msg: fmt.Sprintf(format, args...), Err: ErrLimit}
}

// grid collects the rows of a sheet under the limits, then becomes a Table.
type grid struct {
	lim    Limits
	rows   []Row
	total  int // non-blank rows, header included, kept or not (KeepRows)
	cells  int
	maxCol int
}

// add stores one sheet row; blank rows are dropped. texts are cell values
// as read; num tells how to read numbers.
func (g *grid) add(rowNum int, cells []Cell) error {
	// Trim trailing empty cells.
	n := len(cells)
	for n > 0 && cells[n-1].Text == "" {
		n--
	}
	if n == 0 {
		return nil
	}
	if n > g.lim.MaxCols {
		return limitErr("row %d has %d columns; the limit is %d", rowNum, n, g.lim.MaxCols)
	}
	if g.total >= g.lim.MaxRows {
		return limitErr("more than %d rows; the limit is %d rows (header included)", g.lim.MaxRows, g.lim.MaxRows)
	}
	if g.cells += n; g.cells > g.lim.MaxCells {
		return limitErr("more than %d cells; the limit is %d", g.lim.MaxCells, g.lim.MaxCells)
	}
	g.maxCol = max(g.maxCol, n)
	g.total++
	if g.keeps() {
		g.rows = append(g.rows, Row{Num: rowNum, Cells: cells[:n:n]})
	}
	return nil
}

// keeps tells whether the next row is kept: with KeepRows, only the header
// and that many rows after it.
func (g *grid) keeps() bool { return g.lim.KeepRows <= 0 || len(g.rows) <= g.lim.KeepRows }

// checkLen enforces MaxCellLen on a raw cell text.
func (g *grid) checkLen(rowNum, col int, s string) error {
	if len(s) > g.lim.MaxCellLen && utf8.RuneCountInString(s) > g.lim.MaxCellLen {
		return limitErr("row %d, column %s: the cell holds more than %d characters", rowNum, columnLetters(col), g.lim.MaxCellLen)
	}
	return nil
}

// table turns the collected rows into a Table: the first row is the header.
func (g *grid) table(format, where string) (*Table, error) {
	if len(g.rows) == 0 {
		return nil, core.Invalidf("%s has no rows: not even a header row", where)
	}
	head := g.rows[0]
	t := &Table{Format: format, HeaderRow: head.Num, Rows: g.rows[1:], Total: g.total - 1}
	t.Headers = uniqueHeaders(head.Cells, g.maxCol)
	return t, nil
}

func uniqueHeaders(cells []Cell, width int) []string {
	out := make([]string, width)
	seen := make(map[string]int, width)
	for i := range out {
		h := ""
		if i < len(cells) {
			h = cleanHeader(cells[i].Text)
		}
		if h == "" {
			h = "Column " + columnLetters(i)
		}
		base := h
		for n := 2; seen[strings.ToLower(h)] > 0; n++ {
			h = fmt.Sprintf("%s (%d)", base, n)
		}
		seen[strings.ToLower(h)]++
		out[i] = h
	}
	return out
}

// cleanHeader removes invisible characters and folds runs of white space
// (line breaks in a header cell included) into one space.
func cleanHeader(s string) string {
	return strings.Join(strings.Fields(core.CleanText(s)), " ")
}

// columnLetters names a 0-based column as a spreadsheet does: A, B, ... AA.
func columnLetters(i int) string {
	if i < 0 {
		return "?"
	}
	var b []byte
	for i++; i > 0; i = (i - 1) / 26 {
		b = append([]byte{byte('A' + (i-1)%26)}, b...)
	}
	return string(b)
}
