package filereader

import (
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/climatesearch/climatesearch/core"
)

// MaxProblems bounds how many problems (and notes) a report lists.
const MaxProblems = 20

// Problem is one reason a file cannot be loaded as mapped, or (in
// Report.Notes) one oddity that was accepted. Row is the 1-based row in the
// sheet or file (the header row is 1 when it is the first row; 0 for the
// column map as a whole); Column is the file header concerned.
type Problem = core.FileProblem

// Report is what Map made of a table.
type Report struct {
	// Release holds the resources; valid only when Map returned no error.
	Release core.Release `json:"-"`
	// Version is the release's: the version asked for, else the first
	// resource's (a mapped version column).
	Version string `json:"-"`
	// Rows counts the data rows read (blank rows are not rows).
	Rows int `json:"rows"`
	// Resources counts the resources made (Rows - Collapsed).
	Resources int `json:"resources"`
	// Collapsed counts rows that repeat an earlier id with the same values.
	Collapsed int `json:"collapsed"`
	// References counts cells resolved through a #X1234 reference.
	References int `json:"references"`
	// NoA1A3 counts resources kept without an A1-A3 value ('-' or empty).
	NoA1A3 int `json:"no_a1a3"`
	// Problems lists the first MaxProblems reasons the file was refused;
	// ProblemCount counts them all.
	Problems     []Problem `json:"problems,omitempty"`
	ProblemCount int       `json:"problem_count"`
	// Notes lists the first MaxProblems accepted oddities (a collapsed
	// duplicate whose texts differ, a link that is not a URL, a conversion
	// that cannot be keyed); NoteCount counts them all.
	Notes     []Problem `json:"notes,omitempty"`
	NoteCount int       `json:"note_count"`
}

func (r *Report) problem(row int, col, format string, args ...any) {
	r.ProblemCount++
	if len(r.Problems) < MaxProblems {
		r.Problems = append(r.Problems, Problem{Row: row, Column: col, Msg: fmt.Sprintf(format, args...)})
	}
}

func (r *Report) note(row int, col, format string, args ...any) {
	r.NoteCount++
	if len(r.Notes) < MaxProblems {
		r.Notes = append(r.Notes, Problem{Row: row, Column: col, Msg: fmt.Sprintf(format, args...)})
	}
}

// refused is the error of a refused file: it lists the first problems.
func (r *Report) refused() error {
	parts := make([]string, 0, min(len(r.Problems), 5))
	for i, p := range r.Problems {
		if i == 5 {
			break
		}
		parts = append(parts, p.String())
	}
	more := ""
	if r.ProblemCount > len(parts) {
		more = fmt.Sprintf("; and %d more", r.ProblemCount-len(parts))
	}
	return core.Invalidf("file refused, nothing stored: %d problem(s): %s%s", r.ProblemCount, strings.Join(parts, "; "), more)
}

// refPattern is a Tabel 7 reference: the cell takes its value from the same
// column of the row with that id.
var refPattern = regexp.MustCompile(`^#[A-Za-z]{1,3}[0-9]{1,9}$`)

// missing tells whether a cell holds no value: empty, or Tabel 7's '-' (also
// an en or em dash).
func missing(s string) bool {
	switch s {
	case "", "-", "\u2013", "\u2014":
		return true
	}
	return false
}

// Map turns a table into a partial release of the catalog with a column map
// (field -> header). The whole file is refused, nothing kept, when any
// problem is found: the error is then a core.KindInvalid error naming the
// first problems and the report lists up to MaxProblems of them.
//
// Rules:
//   - the map needs id, a1a3 and a name (name or any name_* field); an
//     unknown field or a header not in the table is a problem.
//   - `name` and `description` fill the catalog's own language (Swedish for
//     national, Danish for dkbr) unless the explicit field is mapped too.
//   - `name_de_en` is Tabel 7's `Navn DE/ENG`: on a #G row (ÖKOBAUDAT) it
//     is the German name (name_de), on the others the English one (BR25's
//     EPD Danmark #B rows); an explicitly mapped name_de or name_en wins.
//   - '-', '–' and empty cells are missing values. A row whose a1a3 is
//     missing is kept without a1a3 (Tabel 7 publishes such rows); a number
//     that does not read is a problem with its row and column.
//   - a cell such as #G0164 (outside the id column) takes that column's
//     value from the row with id #G0164; a missing target or a cycle is a
//     problem.
//   - units are normalised for display (M3/m3 -> m³, M2 -> m², KG -> kg,
//     STK/stk. -> stk); longer unit texts are kept as published.
//   - conversions: with conversion_value mapped, each row with a positive
//     value gets one conversion. Its key is the conversion_unit cell when
//     that holds a ratio (kg/m³); a bare unit U gives U/<declared unit>;
//     an unmapped conversion_unit gives kg/<declared unit> (Tabel 7's
//     Masse faktor is kg per declared unit). A key that needs the declared
//     unit on a row without one, or a value <= 0, is skipped with a note.
//   - a repeated id with the same values (numbers, units, conversions) is
//     collapsed into its first row; differing texts are kept from the first
//     row and noted. A repeated id with different values is a problem.
//   - a missing id, an id with : / or ? or longer than 100 characters, and
//     text that looks like a spreadsheet formula (=...) are problems.
//   - origin must be an http(s) URL; anything else is dropped with a note.
func Map(t *Table, catalog core.CatalogID, mapping map[string]string, version string) (Report, error) {
	var rel core.Release
	rep, err := MapEach(t, catalog, mapping, version, 0, func(rs []core.Resource) error {
		rel.Resources = append(rel.Resources, rs...)
		return nil
	})
	if err != nil {
		return rep, err
	}
	rel.Catalog, _ = core.ParseCatalog(string(catalog)) // MapEach read it
	rel.Origin, rel.Version = core.OriginFile, rep.Version
	rep.Release = rel
	return rep, nil
}

// MapEach maps t as Map does, but hands the resources to each in the
// file's order, in chunks of at most n (0: one chunk), each chunk each's
// own. each is called only for a file without problems: with several
// chunks every row is mapped and checked first, then mapped again as the
// chunks are handed over, and every row of t is let go once mapped (t is
// spent after it; Map's one chunk leaves t as it was), so a file of a million rows is never held as its table
// and all its resources at once. A file with problems gets Map's error
// listing them. An error from each stops the mapping and is returned.
func MapEach(t *Table, catalog core.CatalogID, mapping map[string]string, version string, n int, each func([]core.Resource) error) (Report, error) {
	var rep Report
	if t == nil {
		return rep, core.Invalidf("no table to map")
	}
	cat, err := core.ParseCatalog(string(catalog))
	if err != nil {
		return rep, err
	}
	version = strings.TrimSpace(version)

	// The column map.
	cols := map[string]int{} // field -> column index
	fields := make([]string, 0, len(mapping))
	for f := range mapping {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	for _, raw := range fields {
		header := strings.TrimSpace(mapping[raw])
		f := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(raw), "map.")))
		if header == "" {
			continue
		}
		if _, ok := fieldIndex[f]; !ok {
			rep.problem(0, "", "unknown field %q in the column map; the fields are: %s", raw, knownFields())
			continue
		}
		i := t.Column(header)
		if i < 0 {
			rep.problem(0, header, "field %s is mapped to %q, which is not a header of the file; the headers are: %s", f, header, quoteList(t.Headers, 40))
			continue
		}
		cols[f] = i
	}
	if !hasKey(mapping, "id") {
		rep.problem(0, "", "map.id is required: the column that holds the resource ids")
	}
	if !hasKey(mapping, "a1a3") {
		rep.problem(0, "", "map.a1a3 is required: the column of GWP A1-A3 (kg CO2e per declared unit)")
	}
	if !hasKey(mapping, "name", "name_sv", "name_en", "name_da", "name_de", "name_de_en") {
		rep.problem(0, "", "map.name is required (or name_sv, name_en, name_da, name_de, name_de_en): the column of resource names")
	}
	if rep.ProblemCount > 0 {
		return rep, rep.refused()
	}
	if len(t.Rows) == 0 {
		rep.problem(0, "", "the file has headers but no data rows")
		return rep, rep.refused()
	}

	// Ids: which rows references read (kept until the end), and which ids
	// repeat (their first resource is kept to compare the repeats with).
	idCol := cols["id"]
	firstRow, repeated, hold := scanIDs(t, idCol)
	rep.Rows = len(t.Rows)
	m := mapper{t: t, cols: cols, idCol: idCol, firstRow: firstRow, rep: &rep, cat: cat, version: version}
	if n <= 0 || n >= len(t.Rows) {
		// One chunk: handed over once every row is mapped and checked.
		var all []core.Resource
		m.walk(repeated, nil, func(r core.Resource) error { all = append(all, r); return nil })
		if rep.ProblemCount > 0 {
			return rep, rep.refused()
		}
		rep.Version = first(version, rep.Version)
		return rep, each(all)
	}
	// Several chunks: every row is mapped and checked first, the file
	// refused before anything is handed over; then mapped again, chunk by
	// chunk, each row let go once mapped. The second walk finds what the
	// first did (the same rows, the same rules) and reports into a copy.
	m.walk(repeated, nil, func(core.Resource) error { return nil })
	if rep.ProblemCount > 0 {
		return rep, rep.refused()
	}
	var again Report
	m.rep = &again
	chunk := make([]core.Resource, 0, n)
	err = m.walk(repeated, hold, func(r core.Resource) error {
		if chunk = append(chunk, r); len(chunk) < n {
			return nil
		}
		err := each(chunk)
		chunk = make([]core.Resource, 0, n)
		return err
	})
	if err == nil && len(chunk) > 0 {
		err = each(chunk)
	}
	rep.Version = first(version, rep.Version)
	return rep, err
}

// walk maps every row in order and hands each resource to hand, unless
// the row had a problem or repeats an earlier id (collapsed, or a problem
// when its values differ); m.rep counts and lists what it finds. With
// hold set, a row not held is let go once mapped. An error of hand stops it.
func (m *mapper) walk(repeated map[string]bool, hold []bool, hand func(core.Resource) error) error {
	t, rep := m.t, m.rep
	kept := map[string]core.Resource{} // a repeated id's first resource
	keptRow := map[string]int{}
	for i := range t.Rows {
		r, ok := m.row(i)
		rowNum := t.Rows[i].Num
		if hold != nil && !hold[i] {
			t.Rows[i].Cells = nil // mapped: no reference reads it again
		}
		if !ok {
			continue
		}
		if repeated[r.ID] {
			if prev, dup := kept[r.ID]; dup {
				if diff := valueDiff(&prev, &r); diff != "" {
					rep.problem(rowNum, t.Headers[m.idCol], "id %s repeats row %d with different values (%s)", r.ID, keptRow[r.ID], diff)
					continue
				}
				if diff := textDiff(&prev, &r); diff != "" {
					rep.note(rowNum, t.Headers[m.idCol], "id %s repeats row %d with the same values but a different %s; row %d is kept", r.ID, keptRow[r.ID], diff, keptRow[r.ID])
				}
				rep.Collapsed++
				continue
			}
			kept[r.ID], keptRow[r.ID] = r.Clone(), rowNum
		}
		if r.A1A3 == nil {
			rep.NoA1A3++
		}
		if rep.Resources == 0 {
			rep.Version = r.Version
		}
		rep.Resources++
		if rep.ProblemCount > 0 {
			continue // refused: only the report goes on
		}
		if err := hand(r); err != nil {
			return err
		}
	}
	return nil
}

func setOnce(set map[string]struct{}, k string) bool {
	if _, ok := set[k]; ok {
		return false
	}
	set[k] = struct{}{}
	return true
}

// scanIDs reads the id column and the cells that refer to ids: firstRow
// maps each referenced id to its first row, repeated holds the ids of more
// than one row, and hold marks the rows a reference reads (their cells
// stay while the others are let go).
func scanIDs(t *Table, idCol int) (firstRow map[string]int, repeated map[string]bool, hold []bool) {
	refs := map[string]bool{}
	for _, row := range t.Rows {
		for col, c := range row.Cells {
			if col != idCol && strings.HasPrefix(c.Text, "#") && refPattern.MatchString(c.Text) {
				refs[c.Text] = true
			}
		}
	}
	firstRow, repeated, hold = map[string]int{}, map[string]bool{}, make([]bool, len(t.Rows))
	seen := make(map[string]struct{}, len(t.Rows))
	for i, row := range t.Rows {
		id := row.Cell(idCol).Text
		if missing(id) {
			continue
		}
		if key := core.CleanText(id); !setOnce(seen, key) {
			repeated[key] = true // a resource's id is cleaned as it is mapped
			continue
		}
		if refs[id] {
			firstRow[id], hold[i] = i, true
		}
	}
	return firstRow, repeated, hold
}

func hasKey(mapping map[string]string, fields ...string) bool {
	for k, v := range mapping {
		f := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(k), "map.")))
		for _, want := range fields {
			if f == want && strings.TrimSpace(v) != "" {
				return true
			}
		}
	}
	return false
}

type mapper struct {
	t        *Table
	cols     map[string]int
	idCol    int
	firstRow map[string]int
	rep      *Report
	cat      core.CatalogID
	version  string
}

// cell returns the value of column col in row i, following #X references.
func (m *mapper) cell(i, col int) (Cell, bool) {
	c := m.t.Rows[i].Cell(col)
	if col == m.idCol || !strings.HasPrefix(c.Text, "#") || !refPattern.MatchString(c.Text) {
		return c, true
	}
	seen := map[int]bool{i: true}
	chain := []string{m.t.Rows[i].Cell(m.idCol).Text, c.Text}
	for refPattern.MatchString(c.Text) {
		j, ok := m.firstRow[c.Text]
		if !ok {
			m.rep.problem(m.t.Rows[i].Num, m.t.Headers[col], "refers to %s, which is not an id in the file", c.Text)
			return Cell{}, false
		}
		if seen[j] {
			m.rep.problem(m.t.Rows[i].Num, m.t.Headers[col], "reference cycle: %s", strings.Join(chain, " -> "))
			return Cell{}, false
		}
		seen[j] = true
		c = m.t.Rows[j].Cell(col)
		chain = append(chain, c.Text)
	}
	m.rep.References++
	return c, true
}

// row maps one data row; ok is false when it had problems.
func (m *mapper) row(i int) (core.Resource, bool) {
	t, rep := m.t, m.rep
	rowNum := t.Rows[i].Num
	before := rep.ProblemCount
	r := core.Resource{Catalog: m.cat}
	id := t.Rows[i].Cell(m.idCol).Text
	idHeader := t.Headers[m.idCol]
	switch {
	case missing(id):
		rep.problem(rowNum, idHeader, "the id is missing")
		return r, false
	case strings.ContainsAny(id, ":/?") || len(id) > 100:
		rep.problem(rowNum, idHeader, "id %q may not contain : / ? and is at most 100 characters", clip(id))
		return r, false
	}
	r.ID = id

	var name, description, deEN, convUnit string
	var convValue *float64
	convUnitMapped := false
	for _, fd := range fieldDefs {
		col, ok := m.cols[fd.name]
		if !ok || fd.kind == kindID {
			continue
		}
		if fd.name == "conversion_unit" {
			convUnitMapped = true
		}
		c, ok := m.cell(i, col)
		if !ok || missing(c.Text) {
			continue
		}
		header := t.Headers[col]
		switch fd.kind {
		case kindNumber:
			if !c.IsNum {
				hint := ""
				switch f, _ := classify(c.Text); f {
				case ambiguousComma, ambiguousDot:
					hint = " (a thousands separator or decimals? write the number without grouping)"
				}
				rep.problem(rowNum, header, "%s: %q is not a number%s", fd.name, clip(c.Text), hint)
				continue
			}
			v := c.Num
			switch fd.name {
			case "a1a3":
				r.A1A3 = &v
			case "a1a3_conservative":
				r.A1A3Conservative = &v
			case "a4":
				r.A4 = &v
			case "a5_1":
				r.A51 = &v
			case "conservative_factor":
				r.ConservativeFactor = &v
			case "waste_factor":
				r.WasteFactor = &v
			case "biogenic_carbon":
				r.BiogenicCarbon = &v
			case "conversion_value":
				convValue = &v
			}
		case kindUnit:
			u := NormalizeUnit(c.Text)
			if fd.name == "unit" {
				r.Unit = u
			} else {
				convUnit = u
			}
		case kindURL:
			if u, err := url.Parse(c.Text); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				rep.note(rowNum, header, "origin %q is not an http(s) link; left out", clip(c.Text))
				continue
			}
			r.Origin = c.Text
		case kindText:
			if strings.HasPrefix(c.Text, "=") {
				rep.problem(rowNum, header, "%s: %q looks like a spreadsheet formula; formulas are never evaluated: export the values", fd.name, clip(c.Text))
				continue
			}
			if fd.name == "name_de_en" {
				deEN = c.Text
				continue
			}
			setText(&r, fd.name, c.Text, &name, &description)
		}
	}
	if rep.ProblemCount > before {
		return r, false
	}
	// `name` and `description` fill the catalog's own language.
	if m.cat == core.DKBR {
		r.NameDA = first(r.NameDA, name)
		r.DescriptionDA = first(r.DescriptionDA, description)
	} else {
		r.NameSV = first(r.NameSV, name)
		r.DescriptionSV = first(r.DescriptionSV, description)
	}
	// Tabel 7's Navn DE/ENG: ÖKOBAUDAT's German names on #G rows.
	if strings.HasPrefix(strings.ToUpper(r.ID), "#G") {
		r.NameDE = first(r.NameDE, deEN)
	} else {
		r.NameEN = first(r.NameEN, deEN)
	}
	if r.GWPUnit == "" && r.Unit != "" {
		r.GWPUnit = "kg CO2 eq./" + r.Unit
	}
	if r.Version == "" {
		r.Version = m.version
	}
	if convValue != nil {
		m.conversion(&r, rowNum, *convValue, convUnit, convUnitMapped)
	}
	r.Normalize()
	return r, true
}

// conversion applies the conversion rule (see Map).
func (m *mapper) conversion(r *core.Resource, rowNum int, v float64, unit string, unitMapped bool) {
	header := m.t.Headers[m.cols["conversion_value"]]
	var key string
	switch {
	case strings.Contains(unit, "/"):
		key = unit
	case unitMapped && unit == "":
		m.rep.note(rowNum, header, "conversion %v has no unit; left out", v)
		return
	default:
		num := unit
		if !unitMapped {
			num = "kg"
		}
		if r.Unit == "" {
			// Tabel 7's #S rows have no declared unit: nothing to restate.
			return
		}
		key = num + "/" + r.Unit
	}
	n, d, _ := strings.Cut(key, "/")
	if strings.TrimSpace(n) == "" || strings.TrimSpace(d) == "" {
		m.rep.note(rowNum, header, "conversion unit %q is not of the form <unit>/<unit>; left out", clip(key))
		return
	}
	if v <= 0 {
		m.rep.note(rowNum, header, "conversion %s = %v is not positive; left out", key, v)
		return
	}
	r.Conversions = map[string]float64{key: v}
}

func setText(r *core.Resource, field, v string, name, description *string) {
	switch field {
	case "name":
		*name = v
	case "description":
		*description = v
	case "name_sv":
		r.NameSV = v
	case "name_en":
		r.NameEN = v
	case "name_da":
		r.NameDA = v
	case "name_de":
		r.NameDE = v
	case "description_sv":
		r.DescriptionSV = v
	case "description_en":
		r.DescriptionEN = v
	case "description_da":
		r.DescriptionDA = v
	case "applicability_sv":
		r.ApplicabilitySV = v
	case "applicability_en":
		r.ApplicabilityEN = v
	case "synonyms":
		r.Synonyms = v
	case "synonyms_en":
		r.SynonymsEN = v
	case "gwp_unit":
		r.GWPUnit = v
	case "category":
		r.Category = v
	case "category_en":
		r.CategoryEN = v
	case "category_code":
		r.CategoryCode = v
	case "version":
		r.Version = v
	case "service_life":
		r.ServiceLife = v
	}
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func clip(s string) string {
	if len(s) <= 80 {
		return s
	}
	cut := 77
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + "..."
}

// valueDiff names the first value two rows of one id disagree on.
func valueDiff(a, b *core.Resource) string {
	nums := []struct {
		name string
		x, y *float64
	}{
		{"a1a3", a.A1A3, b.A1A3}, {"a1a3_conservative", a.A1A3Conservative, b.A1A3Conservative},
		{"a4", a.A4, b.A4}, {"a5_1", a.A51, b.A51},
		{"conservative_factor", a.ConservativeFactor, b.ConservativeFactor},
		{"waste_factor", a.WasteFactor, b.WasteFactor}, {"biogenic_carbon", a.BiogenicCarbon, b.BiogenicCarbon},
	}
	for _, n := range nums {
		if (n.x == nil) != (n.y == nil) || (n.x != nil && *n.x != *n.y) {
			return fmt.Sprintf("%s %s vs %s", n.name, fmtPtr(n.x), fmtPtr(n.y))
		}
	}
	if a.Unit != b.Unit {
		return fmt.Sprintf("unit %q vs %q", a.Unit, b.Unit)
	}
	if a.GWPUnit != b.GWPUnit {
		return fmt.Sprintf("gwp_unit %q vs %q", a.GWPUnit, b.GWPUnit)
	}
	if len(a.Conversions) != len(b.Conversions) {
		return "conversions differ"
	}
	for k, v := range a.Conversions {
		if w, ok := b.Conversions[k]; !ok || w != v {
			return "conversions differ"
		}
	}
	return ""
}

// textDiff names the texts two rows of one id disagree on.
func textDiff(a, b *core.Resource) string {
	var out []string
	for _, f := range []struct {
		name string
		x, y string
	}{
		{"name_sv", a.NameSV, b.NameSV}, {"name_en", a.NameEN, b.NameEN}, {"name_da", a.NameDA, b.NameDA}, {"name_de", a.NameDE, b.NameDE},
		{"description_sv", a.DescriptionSV, b.DescriptionSV}, {"description_en", a.DescriptionEN, b.DescriptionEN},
		{"description_da", a.DescriptionDA, b.DescriptionDA}, {"applicability_sv", a.ApplicabilitySV, b.ApplicabilitySV},
		{"applicability_en", a.ApplicabilityEN, b.ApplicabilityEN}, {"synonyms", a.Synonyms, b.Synonyms},
		{"synonyms_en", a.SynonymsEN, b.SynonymsEN}, {"category", a.Category, b.Category},
		{"category_en", a.CategoryEN, b.CategoryEN}, {"category_code", a.CategoryCode, b.CategoryCode},
		{"version", a.Version, b.Version}, {"service_life", a.ServiceLife, b.ServiceLife}, {"origin", a.Origin, b.Origin},
	} {
		if f.x != f.y {
			out = append(out, fmt.Sprintf("%s (%q vs %q)", f.name, clip(f.x), clip(f.y)))
		}
	}
	return strings.Join(out, ", ")
}

func fmtPtr(p *float64) string {
	if p == nil {
		return "missing"
	}
	return formatNum(*p)
}
