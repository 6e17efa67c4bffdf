package boverket

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/climatesearch/climatesearch/core"
	"github.com/xuri/excelize/v2"
)

// Workbook limits: a workbook is a zip, and a small zip can inflate to
// gigabytes; excelize's own defaults (16 GB) would let it.
const (
	unzipSizeLimit    = 512 << 20
	unzipXMLSizeLimit = 128 << 20
	headerSearchRows  = 20
)

// column is a field of the workbook with the headers that name it.
type column int

const (
	colID column = iota
	colName
	colCategory
	colCategoryCode
	colGWPUnit
	colUnit
	colA1A3
	colA1A3Cons
	colA4
	colA51
	colWaste
	colSynonyms
	colConvFactor
	colConvUnit
	colVersion
	colDescription
	numColumns
)

// aliases are the accepted headers, Swedish and English, compared after
// foldKey (case, spaces, dashes and punctuation ignored; a parenthesised
// suffix such as "(kg CO2e/enhet)" is cut first). Keep the package comment's
// table in step.
var aliases = [numColumns][]string{
	colID:           {"Resurs-ID", "Resursid", "Resource ID", "ResourceId"},
	colName:         {"Produktnamn", "Namn", "Resursnamn", "Product name", "Name", "Resource name"},
	colCategory:     {"Kategori", "Produktkategori", "Category", "Product category"},
	colCategoryCode: {"Kategori-ID", "Kategorikod", "Category ID", "Category code"},
	colGWPUnit:      {"Enhet för klimatpåverkan", "Unit for climate impact", "Climate impact unit"},
	colUnit:         {"Deklarerad enhet", "Enhet", "Declared unit", "Unit"},
	colA1A3: {"Klimatpåverkan A1-A3 typiskt värde", "A1-A3 typiskt värde", "A1-A3 typiskt",
		"Climate impact A1-A3 typical value", "A1-A3 typical value", "A1-A3 Typical"},
	colA1A3Cons: {"Klimatpåverkan A1-A3 konservativt värde", "A1-A3 konservativt värde", "A1-A3 konservativt",
		"Climate impact A1-A3 conservative value", "A1-A3 conservative value", "A1-A3 Conservative"},
	colA4:          {"A4", "Klimatpåverkan A4", "Climate impact A4"},
	colA51:         {"A5.1", "Klimatpåverkan A5.1", "Climate impact A5.1"},
	colWaste:       {"Avfallsfaktor", "Waste factor"},
	colSynonyms:    {"Synonymer", "Synonyms"},
	colConvFactor:  {"Omräkningsfaktor", "Conversion factor"},
	colConvUnit:    {"Enhet omräkningsfaktor", "Omräkningsfaktor enhet", "Conversion unit", "Conversion factor unit"},
	colVersion:     {"Version"},
	colDescription: {"Beskrivning", "Description"},
}

var aliasIndex = func() map[string]column {
	m := map[string]column{}
	for c, names := range aliases {
		for _, n := range names {
			m[headerKey(n)] = column(c)
		}
	}
	return m
}()

// headerKey folds a header for matching; a trailing "(unit)" or "[unit]" is
// not part of the name.
func headerKey(s string) string {
	if i := strings.IndexAny(s, "(["); i > 0 {
		s = s[:i]
	}
	return foldKey(s)
}

// matchHeader names the column a header cell stands for.
func matchHeader(cell string) (column, bool) {
	k := headerKey(cell)
	if k == "" {
		return 0, false
	}
	if c, ok := aliasIndex[k]; ok {
		return c, true
	}
	// Verbose A1-A3 headers vary most ("Klimatpåverkan A1-A3, typiskt
	// värde, kg CO2e"); the module and the qualifier identify them.
	if strings.Contains(k, "a1a3") {
		switch {
		case strings.Contains(k, "typ"):
			return colA1A3, true
		case strings.Contains(k, "konserv"), strings.Contains(k, "conserv"):
			return colA1A3Cons, true
		}
	}
	return 0, false
}

// Workbook is one culture's workbook, read.
type Workbook struct {
	Culture string
	// HeaderRow is the 1-based row the headers were found on.
	HeaderRow int
	recs      *records
}

// Len is the number of distinct resource ids read.
func (w *Workbook) Len() int { return len(w.recs.byID) }

// ReadWorkbook reads the first sheet of a publisher's workbook of one culture
// ("sv" or "en"). The header row is the first of the first 20 rows that holds
// a resource-id header; id, name and A1-A3 typical columns are required.
func ReadWorkbook(body []byte, culture string) (*Workbook, error) {
	f, err := excelize.OpenReader(bytes.NewReader(body), excelize.Options{
		RawCellValue:      true,
		UnzipSizeLimit:    unzipSizeLimit,
		UnzipXMLSizeLimit: unzipXMLSizeLimit,
	})
	if err != nil {
		return nil, fmt.Errorf("not a readable xlsx workbook: %w", err)
	}
	defer f.Close()
	sheets := f.GetSheetList()
	if len(sheets) == 0 {
		return nil, errors.New("workbook has no sheet")
	}
	sheet := sheets[0]
	rows, err := f.Rows(sheet)
	if err != nil {
		return nil, fmt.Errorf("sheet %q: %w", sheet, err)
	}
	defer rows.Close()

	w := &Workbook{Culture: culture, recs: newRecords()}
	var cols map[column]int
	for n := 1; rows.Next(); n++ {
		// Raw values: the formatted text of a number depends on the cell's
		// format (0,39 / 0.4 / 3.9E-01), its raw value does not.
		cells, err := rows.Columns(excelize.Options{RawCellValue: true})
		if err != nil {
			return nil, fmt.Errorf("sheet %q row %d: %w", sheet, n, err)
		}
		if cols == nil {
			if n > headerSearchRows {
				break
			}
			if c := headerColumns(cells); c != nil {
				if err := requireColumns(c); err != nil {
					return nil, fmt.Errorf("sheet %q row %d: %w", sheet, n, err)
				}
				cols, w.HeaderRow = c, n
			}
			continue
		}
		if blank(cells) {
			continue
		}
		w.recs.add(workbookRecord(cells, cols))
	}
	if err := rows.Error(); err != nil {
		return nil, fmt.Errorf("sheet %q: %w", sheet, err)
	}
	if cols == nil {
		return nil, fmt.Errorf("sheet %q: no header row with a resource-id column (%s) in the first %d rows",
			sheet, strings.Join(aliases[colID], ", "), headerSearchRows)
	}
	return w, nil
}

// headerColumns maps columns to cell indexes when the row holds an id
// header; the first cell naming a column wins.
func headerColumns(cells []string) map[column]int {
	cols := map[column]int{}
	for i, cell := range cells {
		if c, ok := matchHeader(cell); ok {
			if _, seen := cols[c]; !seen {
				cols[c] = i
			}
		}
	}
	if _, ok := cols[colID]; !ok {
		return nil
	}
	return cols
}

func requireColumns(cols map[column]int) error {
	var missing []string
	for _, c := range []column{colID, colName, colA1A3} {
		if _, ok := cols[c]; !ok {
			missing = append(missing, strings.Join(aliases[c], " / "))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("header row lacks required columns: %s", strings.Join(missing, "; "))
	}
	return nil
}

func blank(cells []string) bool {
	for _, c := range cells {
		if core.CleanText(c) != "" {
			return false
		}
	}
	return true
}

// workbookRecord maps one data row. A number that does not parse is "not
// published"; the merge then rejects a row whose A1-A3 typical is missing.
func workbookRecord(cells []string, cols map[column]int) *record {
	text := func(c column) string {
		i, ok := cols[c]
		if !ok || i >= len(cells) {
			return ""
		}
		return core.CleanText(cells[i])
	}
	num := func(c column) *float64 {
		v, ok := parseNumber(text(c))
		if !ok {
			return nil
		}
		return &v
	}
	r := &record{
		id:           normalizeID(text(colID)),
		version:      text(colVersion),
		name:         text(colName),
		description:  text(colDescription),
		synonyms:     text(colSynonyms),
		a1a3:         num(colA1A3),
		a1a3Cons:     num(colA1A3Cons),
		a4:           num(colA4),
		a51:          num(colA51),
		gwpUnit:      text(colGWPUnit),
		unit:         text(colUnit),
		wasteFactor:  num(colWaste),
		category:     text(colCategory),
		categoryCode: normalizeID(text(colCategoryCode)),
	}
	// One factor per row; without its unit it cannot be keyed, so it is dropped.
	if f, u := num(colConvFactor), text(colConvUnit); f != nil && u != "" {
		r.conversions = map[string]float64{u: *f}
	}
	return r
}

// MergeWorkbooks merges the two cultures' workbooks like Merge merges the
// exports. Either may be nil.
func MergeWorkbooks(sv, en *Workbook) Mapped {
	var svr, enr *records
	if sv != nil {
		svr = sv.recs
	}
	if en != nil {
		enr = en.recs
	}
	return mergeRecords(svr, enr)
}

// ExcelSource reads the publisher's two workbooks, the fallback when the
// JSON API fails.
type ExcelSource struct{ cfg Config }

// NewExcelSource returns the workbook source.
func NewExcelSource(cfg Config) *ExcelSource { return &ExcelSource{cfg: cfg} }

// Name identifies the source in logs and errors.
func (s *ExcelSource) Name() string { return "boverket-excel" }

// Fetch downloads and reads both workbooks; either failing fails the source
// for the same reason as in JSONSource.Fetch.
func (s *ExcelSource) Fetch(ctx context.Context) (core.Release, error) {
	for culture, u := range map[string]string{"sv": s.cfg.ExcelURLSV, "en": s.cfg.ExcelURLEN} {
		if strings.TrimSpace(u) == "" {
			return core.Release{}, unavailable(s.Name(), fmt.Errorf("no workbook URL configured for culture %s", culture))
		}
	}
	sv, en, err := both(ctx, s.fetchWorkbook)
	if err != nil {
		return core.Release{}, unavailable(s.Name(), err)
	}
	m := MergeWorkbooks(sv, en)
	if len(m.Resources) == 0 {
		return core.Release{}, unavailable(s.Name(), errors.New("no row has an id and an A1-A3 typical value"))
	}
	return core.Release{
		Catalog:   core.National,
		Origin:    core.OriginExcel,
		Version:   m.Version,
		Resources: m.Resources,
		Rejected:  m.Rejected,
		Complete:  true,
	}, nil
}

func (s *ExcelSource) fetchWorkbook(ctx context.Context, culture string) (*Workbook, error) {
	u := s.cfg.ExcelURLSV
	if culture == "en" {
		u = s.cfg.ExcelURLEN
	}
	// The subscription key belongs to the API; the workbooks live elsewhere.
	body, err := s.cfg.get(ctx, u, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet, */*", "")
	if err != nil {
		return nil, err
	}
	w, err := ReadWorkbook(body, culture)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	if w.Len() == 0 {
		return nil, fmt.Errorf("GET %s: the workbook has no resource rows", u)
	}
	return w, nil
}
