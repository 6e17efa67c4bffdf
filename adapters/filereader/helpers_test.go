package filereader

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"
	"unicode/utf16"
)

// --- xlsx: a minimal package written by hand, so tests control every byte
// of the sheet XML (cached formula values, hostile row numbers, bombs). ---

type xlsxSheet struct {
	name string
	xml  string // the <sheetData> content
}

type zipPart struct {
	name string
	body []byte
}

// xlsxParts returns the parts of a workbook with the sheets and, when sst
// is not nil, a shared-string table.
func xlsxParts(sheets []xlsxSheet, sst []string) []zipPart {
	var types, wb, rels strings.Builder
	types.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>`)
	wb.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>`)
	rels.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`)
	var parts []zipPart
	for i, s := range sheets {
		n := i + 1
		fmt.Fprintf(&types, `<Override PartName="/xl/worksheets/sheet%d.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`, n)
		fmt.Fprintf(&wb, `<sheet name="%s" sheetId="%d" r:id="rId%d"/>`, s.name, n, n)
		fmt.Fprintf(&rels, `<Relationship Id="rId%d" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet%d.xml"/>`, n, n)
		parts = append(parts, zipPart{fmt.Sprintf("xl/worksheets/sheet%d.xml", n), []byte(
			`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>` + s.xml + `</sheetData></worksheet>`)})
	}
	if sst != nil {
		types.WriteString(`<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>`)
		fmt.Fprintf(&rels, `<Relationship Id="rId%d" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/>`, len(sheets)+1)
		var b strings.Builder
		fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="%d" uniqueCount="%d">`, len(sst), len(sst))
		for _, s := range sst {
			fmt.Fprintf(&b, `<si><t xml:space="preserve">%s</t></si>`, xmlEscape(s))
		}
		b.WriteString(`</sst>`)
		parts = append(parts, zipPart{"xl/sharedStrings.xml", []byte(b.String())})
	}
	types.WriteString(`</Types>`)
	wb.WriteString(`</sheets></workbook>`)
	rels.WriteString(`</Relationships>`)
	return append([]zipPart{
		{"[Content_Types].xml", []byte(types.String())},
		{"_rels/.rels", []byte(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`)},
		{"xl/workbook.xml", []byte(wb.String())},
		{"xl/_rels/workbook.xml.rels", []byte(rels.String())},
	}, parts...)
}

func zipParts(t testing.TB, parts []zipPart) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, p := range parts {
		w, err := zw.Create(p.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(p.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func buildXLSX(t testing.TB, sheets []xlsxSheet, sst []string) []byte {
	t.Helper()
	return zipParts(t, xlsxParts(sheets, sst))
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// rowXML writes one row of inline-string and number cells: a value that
// starts with "n:" is a number, "f:<formula>|<cached>" a formula with a
// cached number, "fs:<formula>|<cached>" a formula with cached text.
func rowXML(r int, vals ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<row r="%d">`, r)
	for i, v := range vals {
		ref := fmt.Sprintf("%s%d", columnLetters(i), r)
		switch {
		case v == "":
		case strings.HasPrefix(v, "n:"):
			fmt.Fprintf(&b, `<c r="%s"><v>%s</v></c>`, ref, v[2:])
		case strings.HasPrefix(v, "f:"):
			f, cached, _ := strings.Cut(v[2:], "|")
			fmt.Fprintf(&b, `<c r="%s"><f>%s</f><v>%s</v></c>`, ref, xmlEscape(f), cached)
		case strings.HasPrefix(v, "fs:"):
			f, cached, _ := strings.Cut(v[3:], "|")
			fmt.Fprintf(&b, `<c r="%s" t="str"><f>%s</f><v>%s</v></c>`, ref, xmlEscape(f), xmlEscape(cached))
		default:
			fmt.Fprintf(&b, `<c r="%s" t="inlineStr"><is><t>%s</t></is></c>`, ref, xmlEscape(v))
		}
	}
	b.WriteString(`</row>`)
	return b.String()
}

// --- xls: a BIFF8 workbook in a CFB (OLE2) container, written by hand. ---

func rec(typ uint16, payload []byte) []byte {
	b := make([]byte, 4, 4+len(payload))
	binary.LittleEndian.PutUint16(b, typ)
	binary.LittleEndian.PutUint16(b[2:], uint16(len(payload)))
	return append(b, payload...)
}

func u16(v int) []byte    { return binary.LittleEndian.AppendUint16(nil, uint16(v)) }
func u32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func cat(bs ...[]byte) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

// xlChars encodes string characters: compressed when all are Latin-1.
func xlChars(s string) (flag byte, chars []byte, n int) {
	u := utf16.Encode([]rune(s))
	wide := false
	for _, c := range u {
		if c > 0xFF {
			wide = true
		}
	}
	if !wide {
		for _, c := range u {
			chars = append(chars, byte(c))
		}
		return 0, chars, len(u)
	}
	for _, c := range u {
		chars = binary.LittleEndian.AppendUint16(chars, c)
	}
	return 1, chars, len(u)
}

func xlString16(s string) []byte { // XLUnicodeString: cch u16, flags, chars
	f, c, n := xlChars(s)
	return cat(u16(n), []byte{f}, c)
}

type xlsSheet struct {
	name  string
	cells [][]byte // cell records (rec(...))
}

func labelSST(row, col int, idx uint32) []byte {
	return rec(recLabelSST, cat(u16(row), u16(col), u16(15), u32(idx)))
}
func label(row, col int, s string) []byte {
	return rec(recLabel, cat(u16(row), u16(col), u16(15), xlString16(s)))
}
func number(row, col int, v float64) []byte {
	return rec(recNumber, cat(u16(row), u16(col), u16(15), binary.LittleEndian.AppendUint64(nil, mathFloat64bits(v))))
}

// biffWorkbook builds the Workbook stream: globals with the sheets and the
// shared strings (sstRecords: the SST record and its CONTINUE records,
// already encoded; nil for none), then each sheet.
func biffWorkbook(sheets []xlsSheet, sstRecords []byte) []byte {
	bof := func(dt int) []byte {
		return rec(recBOF, cat(u16(0x0600), u16(dt), u16(0x0DBB), u16(0x07CC), u32(0), u32(0x0006)))
	}
	eof := rec(recEOF, nil)
	// Globals: BOF, BOUNDSHEETs (positions patched below), SST, EOF.
	globals := bof(0x0005)
	var bsOffsets []int
	for _, s := range sheets {
		bsOffsets = append(bsOffsets, len(globals)+4)
		f, c, n := xlChars(s.name)
		globals = append(globals, rec(recBoundSheet, cat(u32(0), []byte{0, 0}, []byte{byte(n), f}, c))...)
	}
	globals = append(globals, sstRecords...)
	globals = append(globals, eof...)
	out := globals
	for i, s := range sheets {
		binary.LittleEndian.PutUint32(out[bsOffsets[i]:], uint32(len(out)))
		out = append(out, bof(0x0010)...)
		for _, c := range s.cells {
			out = append(out, c...)
		}
		out = append(out, eof...)
	}
	return out
}

// sstRecord encodes a shared-string table in one SST record.
func sstRecord(strs ...string) []byte {
	p := cat(u32(uint32(len(strs))), u32(uint32(len(strs))))
	for _, s := range strs {
		p = append(p, xlString16(s)...)
	}
	return rec(recSST, p)
}

type cfbStream struct {
	name string
	data []byte
}

// buildCFB writes a version-3 compound file (512-byte sectors) holding the
// streams; those under 4096 bytes go to the mini stream, as the format
// requires.
func buildCFB(streams ...cfbStream) []byte {
	const ss = 512
	le := binary.LittleEndian
	var sectors [][]byte   // content sectors, FAT sectors excluded (placed first later)
	var fatChains [][2]int // [first sector index in 'sectors', count]
	addChain := func(b []byte) (int, int) {
		start := len(sectors)
		for off := 0; off < len(b); off += ss {
			sec := make([]byte, ss)
			copy(sec, b[off:])
			sectors = append(sectors, sec)
		}
		fatChains = append(fatChains, [2]int{start, len(sectors) - start})
		return start, len(sectors) - start
	}
	// Mini streams.
	var mini []byte
	var miniFAT []uint32
	type placed struct {
		start  uint32
		size   int
		isMini bool
		reg    int // index in fatChains for regular
	}
	places := make([]placed, len(streams))
	for i, s := range streams {
		if len(s.data) < 4096 {
			start := len(mini) / 64
			n := (len(s.data) + 63) / 64
			for k := 0; k < n; k++ {
				next := uint32(start + k + 1)
				if k == n-1 {
					next = cfbEndOfChain
				}
				miniFAT = append(miniFAT, next)
			}
			padded := make([]byte, n*64)
			copy(padded, s.data)
			mini = append(mini, padded...)
			places[i] = placed{start: uint32(start), size: len(s.data), isMini: true}
			if n == 0 {
				places[i].start = cfbEndOfChain
			}
		}
	}
	// Directory: root + streams, 4 entries per sector.
	entry := func(name string, typ byte, child, right uint32, start uint32, size int) []byte {
		e := make([]byte, 128)
		u := utf16.Encode([]rune(name))
		for i, c := range u {
			le.PutUint16(e[2*i:], c)
		}
		le.PutUint16(e[64:], uint16(2*len(u)+2))
		e[66], e[67] = typ, 1
		le.PutUint32(e[68:], cfbNoStream)
		le.PutUint32(e[72:], right)
		le.PutUint32(e[76:], child)
		le.PutUint32(e[116:], start)
		le.PutUint32(e[120:], uint32(size))
		return e
	}
	// Sector layout (content indexes; FAT sectors come first in the file,
	// so file sector = nFAT + content index).
	dirEntries := 1 + len(streams)
	dirBytes := make([]byte, ((dirEntries+3)/4)*ss)
	dirStart, _ := addChain(dirBytes)
	miniFATStart, miniFATCount := -1, 0
	if len(miniFAT) > 0 {
		b := make([]byte, 0, len(miniFAT)*4)
		for _, v := range miniFAT {
			b = le.AppendUint32(b, v)
		}
		for len(b)%ss != 0 {
			b = le.AppendUint32(b, cfbFree)
		}
		miniFATStart, miniFATCount = addChain(b)
	}
	miniStart := -1
	if len(mini) > 0 {
		miniStart, _ = addChain(mini)
	}
	for i, s := range streams {
		if !places[i].isMini {
			start, _ := addChain(s.data)
			places[i] = placed{start: uint32(start), size: len(s.data), reg: len(fatChains) - 1}
		}
	}
	nContent := len(sectors)
	nFAT := 1
	for (nContent+nFAT)*4 > nFAT*ss {
		nFAT++
	}
	shift := func(i int) uint32 { return uint32(i + nFAT) }
	// Directory entries, now that sector numbers are known.
	rootStart, rootSize := uint32(cfbEndOfChain), 0
	if miniStart >= 0 {
		rootStart, rootSize = shift(miniStart), len(mini)
	}
	var child uint32 = cfbNoStream
	if len(streams) > 0 {
		child = 1
	}
	copy(dirBytes, entry("Root Entry", 5, child, cfbNoStream, rootStart, rootSize))
	for i, s := range streams {
		right := uint32(cfbNoStream)
		if i+1 < len(streams) {
			right = uint32(i + 2)
		}
		start := places[i].start
		if !places[i].isMini {
			start = shift(int(start))
		}
		copy(dirBytes[(i+1)*128:], entry(s.name, 2, cfbNoStream, right, start, places[i].size))
	}
	for k := range (len(dirBytes)) / ss {
		copy(sectors[dirStart+k], dirBytes[k*ss:])
	}
	// FAT.
	fat := make([]uint32, nFAT*ss/4)
	for i := range fat {
		fat[i] = cfbFree
	}
	for i := 0; i < nFAT; i++ {
		fat[i] = 0xFFFFFFFD
	}
	for _, c := range fatChains {
		for k := 0; k < c[1]; k++ {
			next := shift(c[0] + k + 1)
			if k == c[1]-1 {
				next = cfbEndOfChain
			}
			fat[shift(c[0]+k)] = next
		}
	}
	// Header.
	h := make([]byte, 512)
	copy(h, oleMagic)
	le.PutUint16(h[24:], 0x3E)
	le.PutUint16(h[26:], 3)
	le.PutUint16(h[28:], 0xFFFE)
	le.PutUint16(h[30:], 9)
	le.PutUint16(h[32:], 6)
	le.PutUint32(h[44:], uint32(nFAT))
	le.PutUint32(h[48:], shift(dirStart))
	le.PutUint32(h[56:], 4096)
	if miniFATStart >= 0 {
		le.PutUint32(h[60:], shift(miniFATStart))
		le.PutUint32(h[64:], uint32(miniFATCount))
	} else {
		le.PutUint32(h[60:], cfbEndOfChain)
	}
	le.PutUint32(h[68:], cfbEndOfChain)
	for i := 0; i < 109; i++ {
		v := uint32(cfbFree)
		if i < nFAT {
			v = uint32(i)
		}
		le.PutUint32(h[76+4*i:], v)
	}
	out := h
	for i := 0; i < nFAT; i++ {
		for k := 0; k < ss/4; k++ {
			out = le.AppendUint32(out, fat[i*ss/4+k])
		}
	}
	for _, s := range sectors {
		out = append(out, s...)
	}
	return out
}

func buildXLS(sheets []xlsSheet, sst []byte) []byte {
	return buildCFB(cfbStream{"Workbook", biffWorkbook(sheets, sst)})
}

func mathFloat64bits(v float64) uint64 { return math.Float64bits(v) }
