package filereader

import (
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/climatesearch/climatesearch/test/shareddata"
)

func rk(row, col int, v uint32) []byte {
	return rec(recRK, cat(u16(row), u16(col), u16(15), u32(v)))
}

func formulaNum(row, col int, v float64) []byte {
	return rec(recFormula, cat(u16(row), u16(col), u16(15), binary.LittleEndian.AppendUint64(nil, math.Float64bits(v)),
		u16(0), u32(0), u16(3), []byte{0x1E, 0x01, 0x00})) // formula bytes: ptgInt 1
}

// formulaSpecial is a FORMULA whose result is text (kind 0, a STRING record
// follows), a boolean (1), an error (2) or empty text (3).
func formulaSpecial(row, col int, kind, value byte) []byte {
	return rec(recFormula, cat(u16(row), u16(col), u16(15), []byte{kind, 0, value, 0, 0, 0, 0xFF, 0xFF},
		u16(0), u32(0), u16(3), []byte{0x1E, 0x01, 0x00}))
}

func TestXLSCells(t *testing.T) {
	// RK: 1.5 as a double's top bits; 12345 as an integer; 309.1 x100 as
	// an integer 30910 divided by 100.
	rkDouble := uint32(math.Float64bits(1.5) >> 32)
	rkInt := uint32(12345<<2) | 2
	rkInt100 := uint32(30910<<2) | 3
	mulrk := rec(recMulRK, cat(u16(3), u16(1), u16(15), u32(rkDouble), u16(15), u32(rkInt), u16(3)))
	sheet := xlsSheet{name: "Tabel", cells: [][]byte{
		labelSST(0, 0, 0), labelSST(0, 1, 1), labelSST(0, 2, 2), label(0, 3, "Kommentar"),
		label(1, 0, "#G1"), rk(1, 1, rkInt100), labelSST(1, 2, 3),
		label(2, 0, "#G2"), formulaNum(2, 1, 309.10000000000002), formulaSpecial(2, 2, 0, 0), rec(recString, xlString16("Stål, plade")),
		formulaSpecial(2, 3, 1, 1),
		label(3, 0, "#G3"), mulrk, formulaSpecial(3, 3, 2, 0x07),
		label(4, 0, "#G4"), number(4, 1, -0.25), formulaSpecial(4, 2, 3, 0), rec(recBoolErr, cat(u16(4), u16(3), u16(15), []byte{0x2A, 1})),
	}}
	data := buildXLS([]xlsSheet{sheet, {name: "Notes", cells: [][]byte{label(0, 0, "x")}}}, sstRecord("Sorterings ID", "A1-A3", "Navn DK", "Tagsten ø"))
	tb := mustRead(t, "small.xls", data, "", Limits{})
	if tb.Format != FormatXLS || !reflect.DeepEqual(tb.Sheets, []string{"Tabel", "Notes"}) ||
		!reflect.DeepEqual(tb.Headers, []string{"Sorterings ID", "A1-A3", "Navn DK", "Kommentar"}) {
		t.Fatalf("format %s sheets %q headers %q", tb.Format, tb.Sheets, tb.Headers)
	}
	want := [][]string{
		{"#G1", "309.1", "Tagsten ø", ""},
		{"#G2", "309.1", "Stål, plade", "TRUE"},
		{"#G3", "1.5", "12345", "#DIV/0!"},
		{"#G4", "-0.25", "", "#N/A"},
	}
	if got := tb.Sample(10); !reflect.DeepEqual(got, want) {
		t.Errorf("cells\n got %q\nwant %q", got, want)
	}
	if c := tb.Rows[1].Cell(1); !c.IsNum || c.Num != 309.1 {
		t.Errorf("cached formula number %+v", c)
	}
	tb = mustRead(t, "small.xls", data, "notes", Limits{})
	if tb.Sheet != "Notes" || tb.Headers[0] != "x" {
		t.Errorf("second sheet %q %q", tb.Sheet, tb.Headers)
	}
}

// A shared string split across SST and CONTINUE records: the continuation
// restarts with its own option byte, here switching to UTF-16.
func TestXLSSharedStringsContinue(t *testing.T) {
	first := "Global Opvarmning"
	rest := "—modul A1-A3"
	p := cat(u32(2), u32(2))
	// String 0: announced length covers both parts; compressed in the SST.
	p = append(p, cat(u16(len(first)+len([]rune(rest))), []byte{0}, []byte(first))...)
	_, restChars, _ := xlChars(rest)
	cont := cat([]byte{1}, restChars)
	// String 1 starts in the CONTINUE record, after string 0 ends, with rich
	// text runs and phonetic data that must be skipped.
	cont = append(cont, cat(u16(2), []byte{0x0C}, u16(1), u32(3), []byte("id"), u32(0), []byte{9, 9, 9})...)
	sst := cat(rec(recSST, p), rec(recContinue, cont))
	data := buildXLS([]xlsSheet{{name: "S", cells: [][]byte{labelSST(0, 0, 0), labelSST(0, 1, 1)}}}, sst)
	tb := mustRead(t, "cont.xls", data, "", Limits{})
	if !reflect.DeepEqual(tb.Headers, []string{first + rest, "id"}) {
		t.Errorf("headers %q", tb.Headers)
	}
}

// A long formula text result continues in CONTINUE records.
func TestXLSStringContinue(t *testing.T) {
	long := strings.Repeat("æ", 100)
	body := xlString16(long)
	strRec := cat(rec(recString, body[:53]), rec(recContinue, cat([]byte{0}, body[53:])))
	data := buildXLS([]xlsSheet{{name: "S", cells: [][]byte{label(0, 0, "name"), formulaSpecial(1, 0, 0, 0), strRec}}}, nil)
	tb := mustRead(t, "str.xls", data, "", Limits{})
	if got := tb.Rows[0].Cell(0).Text; got != long {
		t.Errorf("text %q (%d chars)", got, len([]rune(got)))
	}
}

// Big streams live in regular sectors, small ones in the mini stream; both
// read the same.
func TestXLSRegularAndMiniStreams(t *testing.T) {
	var cells [][]byte
	cells = append(cells, label(0, 0, "id"), label(0, 1, "a1a3"))
	for i := 1; i <= 500; i++ {
		cells = append(cells, label(i, 0, "#G"+strings.Repeat("0", 3)+string(rune('0'+i%10))), number(i, 1, float64(i)/4))
	}
	big := buildXLS([]xlsSheet{{name: "S", cells: cells}}, nil)
	tb := mustRead(t, "big.xls", big, "", Limits{})
	if len(tb.Rows) != 500 || tb.Rows[499].Cell(1).Num != 125 {
		t.Errorf("%d rows", len(tb.Rows))
	}
	small := buildXLS([]xlsSheet{{name: "S", cells: cells[:10]}}, nil)
	if len(small) >= 4096+1536 {
		t.Fatalf("small workbook not in the mini stream (%d bytes)", len(small))
	}
	if tb := mustRead(t, "small.xls", small, "", Limits{}); len(tb.Rows) != 4 {
		t.Errorf("%d rows", len(tb.Rows))
	}
	// Limits apply.
	err := mustFail(t, "big.xls", big, Limits{MaxRows: 100}, "more than 100 rows")
	if !errors.Is(err, ErrLimit) {
		t.Errorf("not a limit error: %v", err)
	}
	wide := buildXLS([]xlsSheet{{name: "S", cells: [][]byte{label(0, 0, "id"), label(0, 250, "far")}}}, nil)
	mustFail(t, "wide.xls", wide, Limits{}, "more than 200 columns")
	longCell := buildXLS([]xlsSheet{{name: "S", cells: [][]byte{label(0, 0, strings.Repeat("x", 300))}}}, nil)
	mustFail(t, "long.xls", longCell, Limits{MaxCellLen: 100}, "more than 100 characters")
}

// Hostile and broken .xls files answer with an error, never a crash or a hang.
func TestXLSHostile(t *testing.T) {
	real := shareddata.Read(t, "data", "dkbr", "lcabyg-library-biff8.xls")
	good := buildXLS([]xlsSheet{{name: "S", cells: [][]byte{label(0, 0, "id"), label(1, 0, "#G1")}}}, nil)
	le := binary.LittleEndian
	edit := func(b []byte, f func([]byte)) []byte {
		c := append([]byte(nil), b...)
		f(c)
		return c
	}
	fatSector := func(b []byte) int { return 512 + int(le.Uint32(b[76:]))*512 }
	cases := map[string][]byte{
		"truncated real":  real[:len(real)/2],
		"truncated small": good[:700],
		"header only":     real[:512],
		"bad version":     edit(good, func(b []byte) { le.PutUint16(b[26:], 5) }),
		"fat beyond file": edit(good, func(b []byte) { le.PutUint32(b[76:], 0x00FFFFFF) }),
		"fat count huge":  edit(good, func(b []byte) { le.PutUint32(b[44:], 0xFFFFFFFF) }),
		"difat cycle": edit(real, func(b []byte) {
			// 309 FAT sectors: 109 in the header, the rest in DIFAT sector
			// 300, whose next-pointer points at itself.
			le.PutUint32(b[44:], 309)
			le.PutUint32(b[68:], 300)
			le.PutUint32(b[72:], 5)
			off := 512 + 300*512
			for i := 0; i < 127; i++ {
				le.PutUint32(b[off+4*i:], le.Uint32(b[76:]))
			}
			le.PutUint32(b[off+508:], 300)
		}),
		"dir beyond file": edit(good, func(b []byte) { le.PutUint32(b[48:], 1_000_000) }),
		"cyclic fat chains": edit(real, func(b []byte) {
			fs := fatSector(b)
			for i := 4; i < 512; i += 4 {
				le.PutUint32(b[fs+i:], uint32(i/4))
			}
		}),
		"fat all beyond": edit(real, func(b []byte) {
			fs := fatSector(b)
			for i := 0; i < 512; i += 4 {
				le.PutUint32(b[fs+i:], 0x00FFFFFF)
			}
		}),
		"no workbook":      buildCFB(cfbStream{"WordDocument", make([]byte, 5000)}),
		"biff5":            buildCFB(cfbStream{"Book", make([]byte, 100)}),
		"encrypted xlsx":   buildCFB(cfbStream{"EncryptionInfo", make([]byte, 100)}, cfbStream{"EncryptedPackage", make([]byte, 5000)}),
		"biff7 header":     buildCFB(cfbStream{"Workbook", rec(recBOF, cat(u16(0x0500), u16(5)))}),
		"no bof":           buildCFB(cfbStream{"Workbook", rec(recEOF, nil)}),
		"sst index beyond": buildXLS([]xlsSheet{{name: "S", cells: [][]byte{labelSST(0, 0, 7)}}}, sstRecord("a")),
		"sheet pos beyond": edit(good, func(b []byte) {
			i := strings.Index(string(b), "\x85\x00")
			le.PutUint32(b[i+4:], 0x7FFFFFFF)
		}),
		"sst count huge": buildXLS([]xlsSheet{{name: "S", cells: [][]byte{labelSST(0, 0, 0)}}},
			rec(recSST, cat(u32(0xFFFFFFFF), u32(0xFFFFFFFF), xlString16("a")))),
		"sst phonetic huge": buildXLS([]xlsSheet{{name: "S", cells: [][]byte{labelSST(0, 0, 0)}}},
			rec(recSST, cat(u32(1), u32(1), u16(1), []byte{0x04}, u32(0x7FFFFFFF), []byte("a")))),
		"password": buildCFB(cfbStream{"Workbook", cat(rec(recBOF, cat(u16(0x0600), u16(5))), rec(recFilePass, make([]byte, 10)))}),
		"no eof":   buildCFB(cfbStream{"Workbook", cat(rec(recBOF, cat(u16(0x0600), u16(5))), make([]byte, 6000))}),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			tb, err := Read(name+".xls", data, "", Limits{})
			if err == nil {
				// A damaged copy may still read; it must then be sane.
				if len(tb.Rows) > 65536 {
					t.Errorf("%d rows", len(tb.Rows))
				}
				t.Logf("read anyway: %d rows", len(tb.Rows))
				return
			}
			t.Log(err)
		})
	}
	// These must be refused with a message saying why.
	for name, sub := range map[string]string{
		"biff5": "BIFF5", "encrypted xlsx": "password", "password": "password", "no workbook": "not an Excel",
		"truncated real": "truncated", "sst index beyond": "shared string", "fat beyond file": "beyond",
		"cyclic fat chains": "cycle", "biff7 header": "BIFF version", "difat cycle": "cycle in the DIFAT",
	} {
		mustFail(t, name+".xls", cases[name], Limits{}, sub)
	}
}
