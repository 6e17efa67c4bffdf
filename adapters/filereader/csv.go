package filereader

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/climatesearch/climatesearch/core"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// delimiters are the CSV separators detected, in order of preference on a tie.
var delimiters = []rune{';', ',', '\t', '|'}

// readCSV reads delimited text. Encoding: UTF-8 with or without BOM,
// UTF-16 with BOM, else Windows-1252 when the bytes are not valid UTF-8.
// The delimiter is detected from the first records (or an Excel "sep=X"
// first line); the decimal separator from all cells.
func readCSV(data []byte, lim Limits) (*Table, error) {
	text, enc, err := decodeText(data)
	if err != nil {
		return nil, err
	}
	if strings.IndexByte(text, 0) >= 0 {
		return nil, core.Invalidf("the file holds NUL characters: it is binary, not a CSV text")
	}
	// Old Mac line ends: a lone CR ends a line.
	if !strings.Contains(text, "\n") && strings.Contains(text, "\r") {
		text = strings.ReplaceAll(text, "\r", "\n")
	}
	lineOffset := 0 // lines cut before the text given to the CSV reader
	var delim rune
	if line, rest, ok := strings.Cut(text, "\n"); ok || line != "" {
		l := strings.TrimRight(line, "\r")
		if strings.HasPrefix(strings.ToLower(l), "sep=") {
			if r, size := utf8.DecodeRuneInString(l[4:]); size > 0 && size == len(l)-4 && validDelim(r) {
				delim, text, lineOffset = r, rest, 1
			}
		}
	}
	if delim == 0 {
		delim = detectDelimiter(text)
	}

	// encoding/csv builds a whole record before it can be checked: a line of
	// millions of delimiters would cost hundreds of megabytes.
	if line, fields := widestRecord(text, delim); fields > maxCSVFields {
		return nil, limitErr("line %d holds more than %d fields: not a table", line+lineOffset, maxCSVFields)
	}
	r := csv.NewReader(strings.NewReader(text))
	r.Comma = delim
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	g := &grid{lim: lim}
	type rawRow struct {
		num   int
		cells []string
	}
	var raw []rawRow
	rows, cells, widest := 0, 0, 0
	dots, commas := 0, 0
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, core.Invalidf("not readable as CSV (delimiter %s) at line %d: %v", delimName(delim), pe.Line+lineOffset, pe.Err)
			}
			return nil, core.Invalidf("not readable as CSV: %v", err)
		}
		// A row is numbered by the line its record starts on: what a text
		// editor shows, and a spreadsheet too unless a quoted cell spans lines.
		line, _ := r.FieldPos(0)
		n := line + lineOffset
		last := len(rec)
		for last > 0 && core.CleanText(rec[last-1]) == "" {
			last--
		}
		if last == 0 {
			continue
		}
		if last > lim.MaxCols {
			return nil, limitErr("row %d has %d columns; the limit is %d", n, last, lim.MaxCols)
		}
		if rows++; rows > lim.MaxRows {
			return nil, limitErr("more than %d rows; the limit is %d rows (header included)", lim.MaxRows, lim.MaxRows)
		}
		if cells += last; cells > lim.MaxCells {
			return nil, limitErr("more than %d cells; the limit is %d", lim.MaxCells, lim.MaxCells)
		}
		// Every row counts towards the decimal separator; only the rows
		// kept (KeepRows) are held.
		keep := lim.KeepRows <= 0 || len(raw) <= lim.KeepRows
		var row []string
		if keep {
			row = make([]string, last)
		}
		widest = max(widest, last)
		for i := range last {
			if err := g.checkLen(n, i, rec[i]); err != nil {
				return nil, err
			}
			c := core.CleanText(rec[i])
			if keep {
				row[i] = c
			}
			if rows == 1 {
				continue // headers
			}
			// The decimal separator: the unambiguous form most cells use.
			switch f, _ := classify(c); f {
			case dotDecimal:
				dots++
			case commaDecimal:
				commas++
			}
		}
		if keep {
			raw = append(raw, rawRow{num: n, cells: row})
		}
	}

	// A tie goes to ',' when fields are separated by ';' (how Danish and
	// Swedish spreadsheets export), else to '.'.
	dec := byte('.')
	if commas > dots || (commas == dots && delim == ';') {
		dec = ','
	}
	for _, rr := range raw {
		cs := make([]Cell, len(rr.cells))
		for i, s := range rr.cells {
			cs[i] = Cell{Text: s}
			if v, ok, _ := parseNumber(s, dec); ok {
				cs[i].Num, cs[i].IsNum = v, true
			}
		}
		if err := g.add(rr.num, cs); err != nil {
			return nil, err
		}
	}
	// The rows not kept count as the grid's own would have.
	g.total, g.maxCol = rows, max(g.maxCol, widest)
	t, err := g.table(FormatCSV, "the file")
	if err != nil {
		return nil, err
	}
	t.Delimiter = string(delim)
	t.Encoding = enc
	t.DecimalSeparator = string(dec)
	if dots > 0 && commas > 0 {
		t.DecimalSeparator = "mixed"
	}
	return t, nil
}

// maxCSVFields bounds the fields of one record, empty ones included: Excel's
// own column limit.
const maxCSVFields = 16_384

// widestRecord returns the line where the record with the most delimiters
// outside quotes starts, and its field count.
func widestRecord(text string, delim rune) (line, fields int) {
	inQuotes := false
	cur, curLine, ln := 1, 1, 1
	line, fields = 1, 1
	for _, c := range text {
		switch {
		case c == '"':
			inQuotes = !inQuotes
		case c == '\n':
			ln++
			if !inQuotes {
				cur, curLine = 1, ln
			}
		case c == delim && !inQuotes:
			if cur++; cur > fields {
				line, fields = curLine, cur
			}
		}
	}
	return line, fields
}

func validDelim(r rune) bool {
	return r != '"' && r != '\r' && r != '\n' && r != utf8.RuneError && r != 0xFFFE && r != 0
}

func delimName(r rune) string {
	switch r {
	case '\t':
		return "tab"
	case ';':
		return "semicolon"
	case ',':
		return "comma"
	}
	return "'" + string(r) + "'"
}

// decodeText turns the bytes into UTF-8 and names the encoding found.
func decodeText(data []byte) (string, string, error) {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		rest := data[3:]
		if !utf8.Valid(rest) {
			return "", "", core.Invalidf("the file starts with a UTF-8 byte-order mark but is not valid UTF-8")
		}
		return string(rest), "utf-8-bom", nil
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}), bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		enc, name := unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM), "utf-16le"
		if data[0] == 0xFE {
			enc, name = unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM), "utf-16be"
		}
		b, err := enc.NewDecoder().Bytes(data)
		if err != nil {
			return "", "", core.Invalidf("not readable as %s text: %v", name, err)
		}
		return string(b), name, nil
	case utf8.Valid(data):
		return string(data), "utf-8", nil
	}
	b, err := charmap.Windows1252.NewDecoder().Bytes(data)
	if err != nil {
		return "", "", core.Invalidf("neither UTF-8 nor Windows-1252 text: %v", err)
	}
	return string(b), "windows-1252", nil
}

// detectDelimiter picks the separator that splits the first records into
// the most consistent number of fields (more than one).
func detectDelimiter(text string) rune {
	sample := text
	if len(sample) > 64<<10 {
		sample = sample[:64<<10]
		if i := strings.LastIndexByte(sample, '\n'); i > 0 {
			sample = sample[:i]
		}
	}
	best, bestScore := ',', 0
	for _, d := range delimiters {
		if !strings.ContainsRune(sample, d) {
			continue
		}
		r := csv.NewReader(strings.NewReader(sample))
		r.Comma = d
		r.FieldsPerRecord = -1
		r.ReuseRecord = true
		header, same, total := 0, 0, 0
		for total < 50 {
			rec, err := r.Read()
			if err != nil {
				if err == io.EOF || total > 0 {
					break
				}
				// A record the delimiter cannot even parse.
				total = -1
				break
			}
			if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
				continue
			}
			if total == 0 {
				header = len(rec)
			}
			total++
			if len(rec) == header {
				same++
			}
		}
		if total <= 0 || header < 2 {
			continue
		}
		// Consistency first, then more fields.
		score := same*1000/total*1000 + min(header, 999)
		if score > bestScore {
			best, bestScore = d, score
		}
	}
	return best
}
