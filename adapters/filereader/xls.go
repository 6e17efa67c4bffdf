package filereader

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
	"unicode/utf16"

	"github.com/climatesearch/climatesearch/core"
)

// readXLS reads one worksheet of a BIFF8 workbook (Excel 97-2003 .xls):
// text (shared strings, labels), numbers (NUMBER, RK, MULRK), booleans and
// error codes, and formula cells by their cached result (FORMULA, with the
// STRING record that follows a text result); formulas are never evaluated.
//
// It is written here rather than taken from github.com/extrame/xls v0.0.1:
// that reader returned wrong strings and rows for the real lcabyg workbook,
// and its OLE2 layer calls log.Fatal (process exit, which recover cannot
// stop) on a corrupt sector table, loops forever on a cyclic sector chain
// and allocates from unchecked 32-bit counts. This one bounds every loop
// by the data and checks every length before allocating.
func readXLS(data []byte, sheet string, lim Limits) (t *Table, err error) {
	defer func() {
		// Every read is bounds-checked; this is the last line of defence
		// so that a bug on hostile input answers 400 instead of crashing.
		if r := recover(); r != nil {
			t, err = nil, core.Invalidf("the .xls workbook is malformed (reader failed: %v)", r)
		}
	}()
	c, err := openCFB(data)
	if err != nil {
		return nil, core.Invalidf("%v", err)
	}
	wb, found, err := c.stream("Workbook")
	if err != nil {
		return nil, core.Invalidf("%v", err)
	}
	if !found {
		switch {
		case c.has("EncryptedPackage"):
			return nil, core.Invalidf("the workbook is password-protected: save an unprotected copy")
		case c.has("Book"):
			return nil, core.Invalidf("an Excel 5.0/95 (BIFF5) workbook is not supported: save it as .xlsx or .csv")
		}
		return nil, core.Invalidf("an OLE2 file without a Workbook stream: not an Excel .xls workbook (a Word or other Office file?)")
	}
	b := &biff{data: wb}
	sheets, err := b.globals()
	if err != nil {
		return nil, core.Invalidf("%v", err)
	}
	var names []string
	var worksheets []boundSheet
	for _, s := range sheets {
		if s.kind == 0 { // worksheets; chart, macro and VB sheets have no cells
			names = append(names, s.name)
			worksheets = append(worksheets, s)
		}
	}
	if len(worksheets) == 0 {
		return nil, core.Invalidf("the workbook has no worksheet")
	}
	name, err := pickSheet(names, sheet)
	if err != nil {
		return nil, err
	}
	var ws boundSheet
	for _, s := range worksheets {
		if s.name == name {
			ws = s
			break
		}
	}
	g := &grid{lim: lim}
	if err := b.sheetCells(ws, g); err != nil {
		return nil, withSheet(name, err)
	}
	t, err = g.table(FormatXLS, fmt.Sprintf("sheet %q", name))
	if err != nil {
		return nil, err
	}
	t.Sheets, t.Sheet, t.DecimalSeparator = names, name, "."
	return t, nil
}

const (
	recFormula    = 0x0006
	recEOF        = 0x000A
	recFilePass   = 0x002F
	recContinue   = 0x003C
	recBoundSheet = 0x0085
	recMulRK      = 0x00BD
	recRString    = 0x00D6
	recSST        = 0x00FC
	recLabelSST   = 0x00FD
	recNumber     = 0x0203
	recLabel      = 0x0204
	recBoolErr    = 0x0205
	recString     = 0x0207
	recRK         = 0x027E
	recBOF        = 0x0809
)

var errTruncated = errors.New("a record is cut short: the .xls file is truncated or corrupt")

type boundSheet struct {
	name string
	pos  uint32 // stream offset of the sheet's BOF
	kind byte
}

type biff struct {
	data []byte
	sst  []string
}

// record reads the record at off: its type, payload and the next offset.
func (b *biff) record(off int) (typ uint16, payload []byte, next int, err error) {
	if off+4 > len(b.data) {
		return 0, nil, 0, errTruncated
	}
	typ = binary.LittleEndian.Uint16(b.data[off:])
	size := int(binary.LittleEndian.Uint16(b.data[off+2:]))
	if off+4+size > len(b.data) {
		return 0, nil, 0, errTruncated
	}
	return typ, b.data[off+4 : off+4+size], off + 4 + size, nil
}

// continued collects the payloads of the CONTINUE records after off.
func (b *biff) continued(off int) (segs [][]byte, next int, err error) {
	for off < len(b.data) {
		typ, p, n, err := b.record(off)
		if err != nil || typ != recContinue {
			break
		}
		segs = append(segs, p)
		off = n
	}
	return segs, off, nil
}

// globals reads the workbook globals: the sheet list and the shared strings.
func (b *biff) globals() ([]boundSheet, error) {
	typ, p, off, err := b.record(0)
	if err != nil || typ != recBOF || len(p) < 4 {
		return nil, errors.New("the Workbook stream does not start with a BIFF header: not an Excel workbook")
	}
	if v := binary.LittleEndian.Uint16(p); v != 0x0600 {
		return nil, fmt.Errorf("BIFF version %#04x is not supported (only Excel 97-2003 BIFF8): save it as .xlsx or .csv", v)
	}
	var sheets []boundSheet
	for off < len(b.data) {
		typ, p, next, err := b.record(off)
		if err != nil {
			return nil, err
		}
		switch typ {
		case recEOF:
			return sheets, nil
		case recFilePass:
			return nil, errors.New("the workbook is password-protected: save an unprotected copy")
		case recBoundSheet:
			if len(p) < 8 {
				return nil, errTruncated
			}
			r := &contReader{segs: [][]byte{p[6:]}}
			cch, err := r.u8()
			if err != nil {
				return nil, errTruncated
			}
			name, err := r.chars(int(cch))
			if err != nil {
				return nil, errTruncated
			}
			sheets = append(sheets, boundSheet{name: name, pos: binary.LittleEndian.Uint32(p), kind: p[5]})
		case recSST:
			segs, n, _ := b.continued(next)
			if err := b.readSST(append([][]byte{p}, segs...)); err != nil {
				return nil, err
			}
			next = n
		}
		off = next
	}
	return nil, errTruncated
}

// readSST reads the shared-string table. Its count is only trusted as far
// as the bytes go: strings are appended while data lasts.
func (b *biff) readSST(segs [][]byte) error {
	r := &contReader{segs: segs}
	if _, err := r.u32(); err != nil {
		return errTruncated
	}
	unique, err := r.u32()
	if err != nil {
		return errTruncated
	}
	for i := uint32(0); i < unique; i++ {
		s, err := r.richString()
		if err != nil {
			if r.done() {
				return nil // fewer strings than announced: indexes beyond fail later
			}
			return err
		}
		b.sst = append(b.sst, s)
	}
	return nil
}

type xlsCell struct {
	row, col int
	cell     Cell
}

// sheetCells reads the cells of one worksheet into the grid.
func (b *biff) sheetCells(ws boundSheet, g *grid) error {
	off := int(ws.pos)
	typ, p, off, err := b.record(off)
	if err != nil || typ != recBOF || len(p) < 4 {
		return errors.New("the sheet does not start where the workbook says: the file is corrupt")
	}
	var cells []xlsCell
	nonEmpty := 0
	put := func(row, col int, c Cell) error {
		if col >= g.lim.MaxCols {
			return limitErr("row %d has more than %d columns; the limit is %d", row+1, g.lim.MaxCols, g.lim.MaxCols)
		}
		if err := g.checkLen(row+1, col, c.Text); err != nil {
			return err
		}
		if c.Text == "" {
			return nil
		}
		if nonEmpty++; nonEmpty > g.lim.MaxCells {
			return limitErr("more than %d non-empty cells; the limit is %d", g.lim.MaxCells, g.lim.MaxCells)
		}
		cells = append(cells, xlsCell{row: row, col: col, cell: c})
		return nil
	}
	pendingRow, pendingCol := -1, -1 // a FORMULA whose text result follows in STRING
	le := binary.LittleEndian
	for {
		if off >= len(b.data) {
			return errTruncated
		}
		typ, p, next, err := b.record(off)
		if err != nil {
			return err
		}
		if typ == recEOF {
			break
		}
		if typ == recBOF { // an embedded substream (chart): skip to its EOF
			depth := 1
			for depth > 0 {
				t2, _, n2, err := b.record(next)
				if err != nil {
					return err
				}
				switch t2 {
				case recBOF:
					depth++
				case recEOF:
					depth--
				}
				next = n2
			}
			off = next
			continue
		}
		if typ != recString && typ != recContinue && typ != 0x04BC && typ != 0x0221 && typ != 0x0236 {
			pendingRow = -1 // only SHRFMLA, ARRAY or TABLE may sit between FORMULA and STRING
		}
		switch typ {
		case recLabelSST:
			if len(p) < 10 {
				return errTruncated
			}
			idx := le.Uint32(p[6:])
			if uint64(idx) >= uint64(len(b.sst)) {
				return fmt.Errorf("cell %s%d refers to shared string %d of %d: the file is corrupt",
					columnLetters(int(le.Uint16(p[2:]))), int(le.Uint16(p))+1, idx, len(b.sst))
			}
			if err := put(int(le.Uint16(p)), int(le.Uint16(p[2:])), textCell(b.sst[idx])); err != nil {
				return err
			}
		case recLabel, recRString:
			if len(p) < 9 {
				return errTruncated
			}
			r := &contReader{segs: [][]byte{p[6:]}}
			cch, err := r.u16()
			if err != nil {
				return errTruncated
			}
			s, err := r.chars(int(cch))
			if err != nil {
				return errTruncated
			}
			if err := put(int(le.Uint16(p)), int(le.Uint16(p[2:])), textCell(s)); err != nil {
				return err
			}
		case recNumber:
			if len(p) < 14 {
				return errTruncated
			}
			if err := put(int(le.Uint16(p)), int(le.Uint16(p[2:])), numberCell(math.Float64frombits(le.Uint64(p[6:])))); err != nil {
				return err
			}
		case recRK:
			if len(p) < 10 {
				return errTruncated
			}
			if err := put(int(le.Uint16(p)), int(le.Uint16(p[2:])), numberCell(rkValue(le.Uint32(p[6:])))); err != nil {
				return err
			}
		case recMulRK:
			if len(p) < 6 || (len(p)-6)%6 != 0 {
				return errTruncated
			}
			row, first := int(le.Uint16(p)), int(le.Uint16(p[2:]))
			n := (len(p) - 6) / 6
			for i := 0; i < n; i++ {
				if err := put(row, first+i, numberCell(rkValue(le.Uint32(p[4+6*i+2:])))); err != nil {
					return err
				}
			}
		case recBoolErr:
			if len(p) < 8 {
				return errTruncated
			}
			if err := put(int(le.Uint16(p)), int(le.Uint16(p[2:])), boolErrCell(p[6], p[7] == 1)); err != nil {
				return err
			}
		case recFormula:
			if len(p) < 20 {
				return errTruncated
			}
			row, col := int(le.Uint16(p)), int(le.Uint16(p[2:]))
			v := p[6:14]
			if le.Uint16(v[6:]) != 0xFFFF {
				if err := put(row, col, numberCell(math.Float64frombits(le.Uint64(v)))); err != nil {
					return err
				}
				break
			}
			switch v[0] {
			case 0: // text: the STRING record follows
				pendingRow, pendingCol = row, col
			case 1:
				err = put(row, col, boolErrCell(v[2], false))
			case 2:
				err = put(row, col, boolErrCell(v[2], true))
			}
			if err != nil {
				return err
			}
		case recString:
			if pendingRow < 0 {
				break
			}
			segs, n, _ := b.continued(next)
			r := &contReader{segs: append([][]byte{p}, segs...)}
			cch, err := r.u16()
			if err != nil {
				return errTruncated
			}
			s, err := r.chars(int(cch))
			if err != nil {
				return errTruncated
			}
			if err := put(pendingRow, pendingCol, textCell(s)); err != nil {
				return err
			}
			pendingRow = -1
			next = n
		}
		off = next
	}
	// Rows in order; within a row, a later record for the same cell wins.
	sort.SliceStable(cells, func(i, j int) bool {
		if cells[i].row != cells[j].row {
			return cells[i].row < cells[j].row
		}
		return cells[i].col < cells[j].col
	})
	for i := 0; i < len(cells); {
		j := i
		width := 0
		for j < len(cells) && cells[j].row == cells[i].row {
			width = max(width, cells[j].col+1)
			j++
		}
		row := make([]Cell, width)
		for _, c := range cells[i:j] {
			row[c.col] = c.cell
		}
		if err := g.add(cells[i].row+1, row); err != nil {
			return err
		}
		i = j
	}
	return nil
}

func textCell(s string) Cell { return workbookCell(s) }

func numberCell(v float64) Cell {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return Cell{Text: "#NUM!"}
	}
	v = clean(v)
	return Cell{Text: formatNum(v), Num: v, IsNum: true}
}

func boolErrCell(v byte, isErr bool) Cell {
	if !isErr {
		if v != 0 {
			return Cell{Text: "TRUE"}
		}
		return Cell{Text: "FALSE"}
	}
	switch v {
	case 0x00:
		return Cell{Text: "#NULL!"}
	case 0x07:
		return Cell{Text: "#DIV/0!"}
	case 0x0F:
		return Cell{Text: "#VALUE!"}
	case 0x17:
		return Cell{Text: "#REF!"}
	case 0x1D:
		return Cell{Text: "#NAME?"}
	case 0x24:
		return Cell{Text: "#NUM!"}
	}
	return Cell{Text: "#N/A"}
}

// rkValue decodes an RK number: a 30-bit integer or the top 30 bits of a
// double, optionally divided by 100.
func rkValue(rk uint32) float64 {
	var v float64
	if rk&2 != 0 {
		v = float64(int32(rk) >> 2)
	} else {
		v = math.Float64frombits(uint64(rk&0xFFFFFFFC) << 32)
	}
	if rk&1 != 0 {
		v /= 100
	}
	return v
}

// contReader reads across a record and its CONTINUE records. Character data
// split across a boundary restarts with an option byte that says whether
// the rest is compressed (Latin-1) or UTF-16.
type contReader struct {
	segs [][]byte
	seg  int
	off  int
}

func (r *contReader) done() bool {
	for r.seg < len(r.segs) && r.off >= len(r.segs[r.seg]) {
		r.seg++
		r.off = 0
	}
	return r.seg >= len(r.segs)
}

func (r *contReader) u8() (byte, error) {
	if r.done() {
		return 0, errTruncated
	}
	v := r.segs[r.seg][r.off]
	r.off++
	return v, nil
}

func (r *contReader) u16() (uint16, error) {
	lo, err := r.u8()
	if err != nil {
		return 0, err
	}
	hi, err := r.u8()
	return uint16(lo) | uint16(hi)<<8, err
}

func (r *contReader) u32() (uint32, error) {
	lo, err := r.u16()
	if err != nil {
		return 0, err
	}
	hi, err := r.u16()
	return uint32(lo) | uint32(hi)<<16, err
}

// skip skips n bytes (formatting runs, phonetic data), crossing records.
func (r *contReader) skip(n int) error {
	for n > 0 {
		if r.done() {
			return errTruncated
		}
		k := min(n, len(r.segs[r.seg])-r.off)
		r.off += k
		n -= k
	}
	return nil
}

// chars reads the option byte and cch characters of an XLUnicodeString body.
func (r *contReader) chars(cch int) (string, error) {
	flags, err := r.u8()
	if err != nil {
		return "", err
	}
	return r.charData(cch, flags&1 != 0)
}

func (r *contReader) charData(cch int, wide bool) (string, error) {
	u := make([]uint16, 0, min(cch, 4096))
	for len(u) < cch {
		if r.seg < len(r.segs) && r.off >= len(r.segs[r.seg]) {
			// The string continues in the next record, which starts with
			// its own option byte.
			r.seg++
			r.off = 0
			if r.seg >= len(r.segs) {
				return "", errTruncated
			}
			f, err := r.u8()
			if err != nil {
				return "", err
			}
			wide = f&1 != 0
			continue
		}
		if r.seg >= len(r.segs) {
			return "", errTruncated
		}
		seg := r.segs[r.seg]
		if wide {
			if r.off+1 >= len(seg) {
				return "", errTruncated
			}
			u = append(u, uint16(seg[r.off])|uint16(seg[r.off+1])<<8)
			r.off += 2
		} else {
			u = append(u, uint16(seg[r.off]))
			r.off++
		}
	}
	return string(utf16.Decode(u)), nil
}

// richString reads an XLUnicodeRichExtendedString (a shared string).
func (r *contReader) richString() (string, error) {
	cch, err := r.u16()
	if err != nil {
		return "", err
	}
	flags, err := r.u8()
	if err != nil {
		return "", err
	}
	runs, ext := 0, 0
	if flags&0x8 != 0 {
		n, err := r.u16()
		if err != nil {
			return "", err
		}
		runs = int(n)
	}
	if flags&0x4 != 0 {
		n, err := r.u32()
		if err != nil {
			return "", err
		}
		if n > 1<<30 {
			return "", errTruncated
		}
		ext = int(n)
	}
	s, err := r.charData(int(cch), flags&1 != 0)
	if err != nil {
		return "", err
	}
	if err := r.skip(4*runs + ext); err != nil {
		return "", err
	}
	return s, nil
}
