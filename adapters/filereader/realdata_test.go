package filereader

import (
	"reflect"
	"testing"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/test/shareddata"
)

// The column maps that load the Danish Tabel 7 files; Suggest proposes them.
var (
	br25Map = map[string]string{
		"id":               "Sorterings ID",
		"name":             "Navn DK",
		"name_de_en":       "Navn DE/ENG",
		"a1a3":             "Global Opvarmning, modul A1-A3",
		"unit":             "Deklareret enhed (FU)",
		"conversion_value": "Masse faktor",
		"conversion_unit":  "Masse enhed",
		"origin":           "Url (link)",
	}
	br18Map = map[string]string{
		"id":               "Sorterings ID",
		"name":             "Navn DK",
		"name_de_en":       "Navn DE/ENG",
		"a1a3":             "Global Opvarmning, modul A1-A3",
		"unit":             "Deklareret enhed (FU)",
		"conversion_value": "Masse faktor",
		"origin":           "Url (link)",
	}
)

var tabel7Headers13 = []string{"Sorterings ID", "Data type", "Navn DE/ENG", "Navn DK",
	"Global Opvarmning, modul A1-A3", "Global Opvarmning, modul C3", "Global Opvarmning, modul C4",
	"Global Opvarmning, modul D", "Deklareret faktor (FU)", "Deklareret enhed (FU)", "Masse faktor"}

func byID(t *testing.T, rs []core.Resource) map[string]core.Resource {
	t.Helper()
	m := make(map[string]core.Resource, len(rs))
	for _, r := range rs {
		if _, dup := m[r.ID]; dup {
			t.Fatalf("id %s twice in the release", r.ID)
		}
		m[r.ID] = r
	}
	return m
}

// want is the expected content of one resource; nil numbers are missing.
type want struct {
	nameDA, nameEN, nameDE, unit, gwpUnit, origin string
	a1a3                                          *float64
	conv                                          map[string]float64
}

func checkResource(t *testing.T, got core.Resource, w want) {
	t.Helper()
	if got.NameDA != w.nameDA || got.NameEN != w.nameEN || got.NameDE != w.nameDE || got.NameSV != "" {
		t.Errorf("%s names: da %q en %q de %q sv %q, want da %q en %q de %q", got.ID, got.NameDA, got.NameEN, got.NameDE, got.NameSV, w.nameDA, w.nameEN, w.nameDE)
	}
	if got.Unit != w.unit || got.GWPUnit != w.gwpUnit {
		t.Errorf("%s unit %q gwp %q, want %q %q", got.ID, got.Unit, got.GWPUnit, w.unit, w.gwpUnit)
	}
	if (got.A1A3 == nil) != (w.a1a3 == nil) || (got.A1A3 != nil && *got.A1A3 != *w.a1a3) {
		t.Errorf("%s a1a3 %s, want %s", got.ID, fmtPtr(got.A1A3), fmtPtr(w.a1a3))
	}
	if !reflect.DeepEqual(got.Conversions, w.conv) {
		t.Errorf("%s conversions %v, want %v", got.ID, got.Conversions, w.conv)
	}
	if got.Origin != w.origin {
		t.Errorf("%s origin %q, want %q", got.ID, got.Origin, w.origin)
	}
}

// TestBR25Workbook loads the real BR25 Tabel 7 workbook: 507 data rows, of
// which three repeat an id with the same numbers (their Danish names differ:
// oil boilers with and without "kondenserende"), collapsed to 504.
func TestBR25Workbook(t *testing.T) {
	data := shareddata.Read(t, "data", "dkbr", "br25-tabel7-2025.xlsx")
	tb, err := Read("br25-tabel7-2025.xlsx", data, "", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if tb.Format != FormatXLSX || !reflect.DeepEqual(tb.Sheets, []string{"Sheet1"}) || tb.Sheet != "Sheet1" || tb.HeaderRow != 1 {
		t.Fatalf("format %s sheets %v sheet %q header row %d", tb.Format, tb.Sheets, tb.Sheet, tb.HeaderRow)
	}
	wantHeaders := append(append([]string{}, tabel7Headers13...), "Masse enhed", "Url (link)", "Kommentar")
	if !reflect.DeepEqual(tb.Headers, wantHeaders) {
		t.Fatalf("headers %q", tb.Headers)
	}
	if len(tb.Rows) != 507 {
		t.Fatalf("%d rows, want 507", len(tb.Rows))
	}
	// Float artefacts are gone at read time: 515.9000000000001 is 515.9.
	if c := tb.Rows[39].Cell(4); c.Text != "515.9" || c.Num != 515.9 || !c.IsNum {
		t.Errorf("row %d A1-A3 %+v, want 515.9", tb.Rows[39].Num, c)
	}
	if got := Suggest(tb.Headers); !reflect.DeepEqual(got, br25Map) {
		t.Errorf("Suggest = %v", got)
	}

	rep, err := Map(tb, core.BR25, br25Map, "BR25")
	if err != nil {
		t.Fatalf("%v\n%v", err, rep.Problems)
	}
	rel := rep.Release
	if rel.Catalog != core.DKBR || rel.Origin != core.OriginFile || rel.Version != "BR25" || rel.Complete || rel.Rejected != 0 {
		t.Fatalf("release %s %s %s complete=%v rejected=%d", rel.Catalog, rel.Origin, rel.Version, rel.Complete, rel.Rejected)
	}
	if rep.Rows != 507 || rep.Resources != 504 || len(rel.Resources) != 504 || rep.Collapsed != 3 || rep.NoA1A3 != 0 || rep.References != 0 {
		t.Fatalf("rows %d resources %d collapsed %d no-a1a3 %d refs %d", rep.Rows, rep.Resources, rep.Collapsed, rep.NoA1A3, rep.References)
	}
	// The three collapsed ids are noted with their differing names.
	if rep.NoteCount != 3 {
		t.Errorf("notes %v", rep.Notes)
	}
	for i, n := range rep.Notes {
		if wantRow := []int{198, 357, 401}[i]; n.Row != wantRow || n.Column != "Sorterings ID" {
			t.Errorf("note %d: %v", i, n)
		}
	}
	res := byID(t, rel.Resources)
	const epd = "https://www.epddanmark.dk/media/tmwhxyym/md-20007-en_rev1_tr%c3%a6dk.pdf"
	const aau = "https://vbn.aau.dk/da/publications/udvikling-af-dansk-generisk-lca-data?"
	for id, w := range map[string]want{
		// Row 2: m³ with its mass factor 470 kg/m³.
		"#B1318": {nameDA: "Krydslamineret træ, CLT (Forbrænding EoL)", unit: "m³", gwpUnit: "kg CO2 eq./m³",
			a1a3: core.F(-664), conv: map[string]float64{"kg/m³": 470}, origin: epd},
		// Row 41: 515.9000000000001 in the file; declared per ton, mass per m².
		"#D1498": {nameDA: "Tagsten, tegl, ikke røde", unit: "ton", gwpUnit: "kg CO2 eq./ton",
			a1a3: core.F(515.9), conv: map[string]float64{"kg/m²": 52.5}, origin: aau},
		// Row 44: 12.764285714285712 kg/m², rounded to 12 significant digits.
		"#D1501": {nameDA: "Tagpap, overpap + underpap", unit: "m²", gwpUnit: "kg CO2 eq./m²",
			a1a3: core.F(5.687), conv: map[string]float64{"kg/m²": 12.7642857143}, origin: aau},
		// Row 134: ton per m³ restates m³ in ton.
		"#D1597": {nameDA: "Letklinker, ekspanderet ler, nødder", unit: "m³", gwpUnit: "kg CO2 eq./m³",
			a1a3: core.F(119.317), conv: map[string]float64{"ton/m³": 0.285}, origin: aau},
		// Row 74: a long unit text kept as published.
		"#D1532": {nameDA: "Mineraluld, fleksibel isolering, kl. 30", unit: "m² with R=1 m²K/W", gwpUnit: "kg CO2 eq./m² with R=1 m²K/W",
			a1a3: core.F(1.551), conv: map[string]float64{"kg/m³": 60}, origin: aau},
		// Row 38: "kg/stk." is keyed as kg/stk; trailing no-break space trimmed.
		"#B1637": {nameDA: "Ventilations aggregater (AHU), 3000m3/h", nameEN: "Small AHU’s with airflow 3000 m3/hr", unit: "stk",
			gwpUnit: "kg CO2 eq./stk", a1a3: core.F(3540), conv: map[string]float64{"kg/stk": 656.79},
			origin: "https://www.epddanmark.dk/media/43kpnonw/md-23024-en.pdf"},
		// Row 354: a kg product with its density.
		"#G0767": {nameDA: "Stål, varmvalset plade, 2-20 mm", nameDE: "Stahl warmgewalzte bleche (2-20mm)", unit: "kg",
			gwpUnit: "kg CO2 eq./kg", a1a3: core.F(2.78247228506), conv: map[string]float64{"kg/m³": 7850},
			origin: "https://www.oekobaudat.de/OEKOBAU.DAT/resource/processes/467aee4d-03e3-4bf5-a916-8d279d5a5f29?version=20.23.050"},
		// Row 197 (row 198 repeats it): the first row's name is kept.
		"#G0164": {nameDA: "Oliekedel, lav temperatur, 20-120 kW", nameDE: "Öl-niedertemperaturgerät 20-120 kw (standgerät)", unit: "stk",
			gwpUnit: "kg CO2 eq./stk", a1a3: core.F(1207.85513778), conv: map[string]float64{"kg/stk": 354},
			origin: "https://www.oekobaudat.de/OEKOBAU.DAT/resource/processes/b2d632fd-5d02-4a45-b1af-3ff87a21dec2?version=20.23.050"},
		// Row 494: a standard value without a declared unit; its mass unit is
		// a full ratio, so it is kept.
		"#S0001": {nameDA: "Enfamiliehuse, afløb", a1a3: core.F(0.008), conv: map[string]float64{"kg/m²": 0.0313563081399},
			origin: "https://vbn.aau.dk/da/publications/klimap%C3%A5virkning-fra-nybyggeri-analytisk-grundlag-til-fastl%C3%A6ggelse?"},
	} {
		got, ok := res[id]
		if !ok {
			t.Errorf("%s missing", id)
			continue
		}
		if got.Version != "BR25" || got.Catalog != core.DKBR {
			t.Errorf("%s version %q catalog %q", id, got.Version, got.Catalog)
		}
		checkResource(t, got, w)
	}
	// Navn DE/ENG: German on the 319 #G resources (322 rows less the three
	// collapsed), English on the four EPD Danmark ventilation rows, '-'
	// elsewhere.
	if de, en := countNames(rel.Resources); de != 319 || en != 4 {
		t.Errorf("%d German and %d English names, want 319 and 4", de, en)
	}
	// Units are displayed in their normal spelling (71 stk rows less the three
	// collapsed oil boilers).
	units := map[string]int{}
	for _, r := range rel.Resources {
		units[r.Unit]++
	}
	for u, n := range map[string]int{"kg": 132, "m²": 124, "m³": 74, "stk": 68, "": 15, "m² with R=1 m²K/W": 38, "ton": 27, "m": 19} {
		if units[u] != n {
			t.Errorf("unit %q: %d resources, want %d (all: %v)", u, units[u], n, units)
		}
	}
}

// TestBR18CSV loads the real BR18 CSV: 465 rows, ids unique, upper-case units,
// 19 rows whose A1-A3 is '-' kept without a1a3.
func TestBR18CSV(t *testing.T) {
	data := shareddata.Read(t, "data", "dkbr", "br18-tabel7-201222.csv")
	tb, err := Read("br18-tabel7-201222.csv", data, "", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if tb.Format != FormatCSV || tb.Delimiter != "," || tb.DecimalSeparator != "." || tb.Encoding != "utf-8" || tb.Sheets != nil {
		t.Fatalf("format %s delimiter %q decimal %q encoding %s", tb.Format, tb.Delimiter, tb.DecimalSeparator, tb.Encoding)
	}
	if !reflect.DeepEqual(tb.Headers, append(append([]string{}, tabel7Headers13...), "Url (link)", "Kommentar")) {
		t.Fatalf("headers %q", tb.Headers)
	}
	if len(tb.Rows) != 465 {
		t.Fatalf("%d rows, want 465", len(tb.Rows))
	}
	if got := Suggest(tb.Headers); !reflect.DeepEqual(got, br18Map) {
		t.Errorf("Suggest = %v", got)
	}
	rep, err := Map(tb, core.DKBR, br18Map, "BR18")
	if err != nil {
		t.Fatalf("%v\n%v", err, rep.Problems)
	}
	rel := rep.Release
	if rel.Version != "BR18" || rep.Resources != 465 || rep.Collapsed != 0 || rep.NoA1A3 != 19 {
		t.Fatalf("version %s resources %d collapsed %d no-a1a3 %d", rel.Version, rep.Resources, rep.Collapsed, rep.NoA1A3)
	}
	// #S0001's link cell is a placeholder text: left out, noted.
	if rep.NoteCount != 1 || rep.Notes[0].Row != 452 || rep.Notes[0].Column != "Url (link)" {
		t.Errorf("notes %v", rep.Notes)
	}
	res := byID(t, rel.Resources)
	for id, w := range map[string]want{
		// Row 2: M3 -> m³ and Masse faktor as kg per declared unit.
		"#B1318": {nameDA: "Krydslamineret træ, CLT (Forbrænding EoL)", unit: "m³", gwpUnit: "kg CO2 eq./m³",
			a1a3: core.F(-664), conv: map[string]float64{"kg/m³": 470},
			origin: "https://www.epddanmark.dk/media/tmwhxyym/md-20007-en_rev1_tr%c3%a6dk.pdf"},
		// Row 36: #G0000, a different product than in BR25.
		"#G0000": {nameDA: "Brandsikkert glas Pyrobel", nameDE: "Fire resistant glass-AGC-Pyrobel", unit: "m²", gwpUnit: "kg CO2 eq./m²",
			a1a3: core.F(71.6), conv: map[string]float64{"kg/m²": 50.05},
			origin: "http://www.oekobaudat.de/OEKOBAU.DAT/resource/processes/70d35332-9f2d-4f3b-8688-431388263d2d?version=00.00.011"},
		// Row 69: A1-A3 is '-': kept without a1a3.
		"#G0122": {nameDA: "Stål, varmvalset plade, Genanvendelse", nameDE: "End of Life von verzinktem Stahl", unit: "kg", gwpUnit: "kg CO2 eq./kg",
			conv:   map[string]float64{"kg/kg": 1},
			origin: "http://www.oekobaudat.de/OEKOBAU.DAT/resource/processes/f34a799a-52de-4f69-a623-335f5be207d9?version=20.19.120"},
		// Row 83: STK -> stk.
		"#G0164": {nameDA: "Oliekedel, lav temperatur, 20-120 kW", nameDE: "Öl-Niedertemperaturgerät 20-120 kW (Standgerät)", unit: "stk",
			gwpUnit: "kg CO2 eq./stk", a1a3: core.F(1287.48), conv: map[string]float64{"kg/stk": 354},
			origin: "http://www.oekobaudat.de/OEKOBAU.DAT/resource/processes/e69bcb28-f58b-443b-b62f-810bbdf6cedb?version=20.19.120"},
		// Row 452: no unit, no mass factor, no link.
		"#S0001": {nameDA: "Enfamiliehuse, afløb", a1a3: core.F(0.00863)},
	} {
		got, ok := res[id]
		if !ok {
			t.Errorf("%s missing", id)
			continue
		}
		checkResource(t, got, w)
	}
	// Navn DE/ENG: German on every #G row, '-' on the others.
	if de, en := countNames(rel.Resources); de != 416 || en != 0 {
		t.Errorf("%d German and %d English names, want 416 and 0", de, en)
	}
	units := map[string]int{}
	for _, r := range rel.Resources {
		units[r.Unit]++
	}
	if !reflect.DeepEqual(units, map[string]int{"kg": 155, "m²": 113, "m³": 94, "stk": 71, "m": 17, "": 15}) {
		t.Errorf("units %v", units)
	}
}

// TestLCAbygXLS reads the real BIFF8 workbook: six sheets, each with its
// headers and rows as Excel shows them (checked cell by cell against xlrd).
func TestLCAbygXLS(t *testing.T) {
	data := shareddata.Read(t, "data", "dkbr", "lcabyg-library-biff8.xls")
	sheets := []string{"Konstruktioner", "Building", "Products", "Andet", "Stages", "LCABYG Library"}
	for _, tc := range []struct {
		sheet   string
		headers []string
		rows    int
		sample  [][]string
	}{
		{"", []string{"Row Labels", "Sum of Area", "Lot", "ProductAmount", "Unit", "Layers"}, 2,
			[][]string{{"Wall 01", "231789", "21. YDERVÆGGE", "1", "M2", "Reinf Concrete 100_Insulation 250"}}},
		{"Building", []string{"Title", "Address", "Area", "HeatedFloorArea", "GrossAreaOverGround", "GrossArea"}, 1,
			[][]string{{"XXX", "XXX", "9239", "10108", "9239", "9239"}}},
		{"Products", []string{"Row Labels", "EnglishName", "RevitNames", "Polish name", "LCABYGmaterial", "Amount", "Unit",
			"Productid", "ProductToStage", "A1A3", "C3", "C4", "D"}, 5, nil},
		{"andet", []string{"Row Labels", "Sum of Area", "Lot", "Unit", "Layers", "Assumption", "Coefficient", "Multiplier"}, 0, nil},
		{"Stages", nil, 2, nil},
		{"LCABYG Library", []string{"name", "id"}, 1304,
			[][]string{{"3-lags-rude  (A1-A3)", "71d53aed-55fe-5b2a-baa5-ffc5aa21a648"}}},
	} {
		tb, err := Read("lcabyg-library-biff8.xls", data, tc.sheet, Limits{})
		if err != nil {
			t.Fatalf("sheet %q: %v", tc.sheet, err)
		}
		if tb.Format != FormatXLS || !reflect.DeepEqual(tb.Sheets, sheets) || tb.HeaderRow != 1 {
			t.Fatalf("format %s sheets %q header row %d", tb.Format, tb.Sheets, tb.HeaderRow)
		}
		if tc.headers != nil && !reflect.DeepEqual(tb.Headers, tc.headers) {
			t.Errorf("sheet %q headers %q", tb.Sheet, tb.Headers)
		}
		if len(tb.Rows) != tc.rows {
			t.Errorf("sheet %q: %d rows, want %d", tb.Sheet, len(tb.Rows), tc.rows)
		}
		if tc.sample != nil && !reflect.DeepEqual(tb.Sample(len(tc.sample)), tc.sample) {
			t.Errorf("sheet %q sample %q", tb.Sheet, tb.Sample(len(tc.sample)))
		}
	}
	// Numbers are numbers; the last library row is where Excel shows it.
	tb, err := Read("lcabyg-library-biff8.xls", data, "Stages", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if c := tb.Rows[0].Cell(9); !c.IsNum || c.Num != 100 || tb.Headers[9] != "mass_factor" {
		t.Errorf("Stages mass_factor %+v (%s)", c, tb.Headers[9])
	}
	if c := tb.Rows[0].Cell(7); !c.IsNum || c.Num != 45658 { // valid_to: a date serial
		t.Errorf("Stages valid_to %+v", c)
	}
	tb, err = Read("lcabyg-library-biff8.xls", data, "LCABYG Library", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	last := tb.Rows[len(tb.Rows)-1]
	if last.Num != 1305 || last.Cell(1).Text != "ee3ef424-210e-518b-b16f-622ad4208630" {
		t.Errorf("last row %d %q", last.Num, last.Cell(1).Text)
	}
}

// countNames counts the resources with a German and with an English name;
// only #G rows may have a German one.
func countNames(rs []core.Resource) (de, en int) {
	for _, r := range rs {
		if r.NameDE != "" {
			de++
		}
		if r.NameEN != "" {
			en++
		}
	}
	return de, en
}
