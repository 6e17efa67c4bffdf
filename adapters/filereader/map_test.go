package filereader

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/climatesearch/climatesearch/core"
)

func csvTable(t *testing.T, text string) *Table {
	t.Helper()
	return mustRead(t, "t.csv", []byte(text), "", Limits{})
}

var t7 = map[string]string{"id": "id", "name": "name", "a1a3": "a1a3", "unit": "unit"}

func mapOK(t *testing.T, tb *Table, cat core.CatalogID, m map[string]string) Report {
	t.Helper()
	rep, err := Map(tb, cat, m, "BR25")
	if err != nil {
		t.Fatalf("Map: %v\n%v", err, rep.Problems)
	}
	return rep
}

func mapFail(t *testing.T, tb *Table, m map[string]string, want ...string) Report {
	t.Helper()
	rep, err := Map(tb, core.DKBR, m, "BR25")
	if err == nil {
		t.Fatalf("Map accepted the file: %d resources", len(rep.Release.Resources))
	}
	if core.KindOf(err) != core.KindInvalid || !strings.Contains(err.Error(), "file refused, nothing stored") {
		t.Errorf("error %v", err)
	}
	if len(rep.Release.Resources) != 0 {
		t.Errorf("a refused file still carries %d resources", len(rep.Release.Resources))
	}
	all := fmt.Sprint(rep.Problems)
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("problems %v lack %q", rep.Problems, w)
		}
	}
	return rep
}

func TestMapColumnMap(t *testing.T) {
	tb := csvTable(t, "id,name,a1a3,unit\n#G1,Beton,1,M3\n")
	mapFail(t, tb, map[string]string{"name": "name", "a1a3": "a1a3"}, "map.id is required")
	mapFail(t, tb, map[string]string{"id": "id", "name": "name"}, "map.a1a3 is required")
	mapFail(t, tb, map[string]string{"id": "id", "a1a3": "a1a3"}, "map.name is required")
	mapFail(t, tb, map[string]string{"id": "id", "name": "name", "a1a3": "A1-A3 typisk"}, `"A1-A3 typisk", which is not a header`)
	rep := mapFail(t, tb, map[string]string{"id": "id", "name": "name", "a1a3": "a1a3", "colour": "unit"}, `unknown field "colour"`)
	if rep.Problems[0].Row != 0 {
		t.Errorf("a column-map problem has no row: %v", rep.Problems[0])
	}
	// Any name field satisfies the name requirement; "map." prefixes and
	// header case are forgiven; empty entries are unmapped.
	rep = mapOK(t, tb, core.DKBR, map[string]string{"map.id": "ID", "name_en": "Name", "a1a3": "a1a3", "unit": " unit ", "category": ""})
	r := rep.Release.Resources[0]
	if r.NameEN != "Beton" || r.NameDA != "" || r.Unit != "m³" {
		t.Errorf("resource %+v", r)
	}
	if _, err := Map(tb, "norway", t7, ""); core.KindOf(err) != core.KindInvalid {
		t.Errorf("unknown catalog: %v", err)
	}
	if _, err := Map(nil, "dkbr", t7, ""); err == nil {
		t.Error("nil table accepted")
	}
}

// name and description fill the catalog's own language.
func TestMapNameLanguage(t *testing.T) {
	tb := csvTable(t, "id,name,desc,a1a3,en\n1,Betong,Gjuten,1,Concrete\n")
	m := map[string]string{"id": "id", "name": "name", "description": "desc", "a1a3": "a1a3", "name_en": "en"}
	r := mapOK(t, tb, core.National, m).Release.Resources[0]
	if r.NameSV != "Betong" || r.DescriptionSV != "Gjuten" || r.NameDA != "" || r.NameEN != "Concrete" || r.Catalog != core.National {
		t.Errorf("national %+v", r)
	}
	r = mapOK(t, tb, core.BR25, m).Release.Resources[0]
	if r.NameDA != "Betong" || r.DescriptionDA != "Gjuten" || r.NameSV != "" || r.Catalog != core.DKBR {
		t.Errorf("dkbr %+v", r)
	}
	// An explicit language field wins over name.
	m["name_da"] = "en"
	if r = mapOK(t, tb, core.DKBR, m).Release.Resources[0]; r.NameDA != "Concrete" {
		t.Errorf("name_da %q", r.NameDA)
	}
}

// The Tabel 7 conventions: '-' missing, units, #S rows without unit.
func TestMapTabel7Conventions(t *testing.T) {
	tb := csvTable(t, "id,name,a1a3,unit,mass,c3\n"+
		"#G1,Beton,-,M3,2400,-\n"+
		"#G2,Stål,1.5,KG,1,0.1\n"+
		"#G3,Plade,2,M2,12.5,\n"+
		"#G4,Dør,3,STK,30,\n"+
		"#G5,Isolering,4,m² with R=1 m²K/W,35,\n"+
		"#S0001,Enfamiliehuse,0.00863,,,\n"+
		"#G6,–,5,stk.,-,\n")
	m := map[string]string{"id": "id", "name": "name", "a1a3": "a1a3", "unit": "unit", "conversion_value": "mass", "a4": "c3"}
	rep := mapOK(t, tb, core.DKBR, m)
	if rep.NoA1A3 != 1 || rep.Resources != 7 || rep.ProblemCount != 0 {
		t.Fatalf("report %+v", rep)
	}
	rs := byID(t, rep.Release.Resources)
	for id, w := range map[string]struct {
		unit string
		a1a3 *float64
		conv map[string]float64
		name string
	}{
		"#G1":    {"m³", nil, map[string]float64{"kg/m³": 2400}, "Beton"},
		"#G2":    {"kg", core.F(1.5), map[string]float64{"kg/kg": 1}, "Stål"},
		"#G3":    {"m²", core.F(2), map[string]float64{"kg/m²": 12.5}, "Plade"},
		"#G4":    {"stk", core.F(3), map[string]float64{"kg/stk": 30}, "Dør"},
		"#G5":    {"m² with R=1 m²K/W", core.F(4), map[string]float64{"kg/m² with R=1 m²K/W": 35}, "Isolering"},
		"#S0001": {"", core.F(0.00863), nil, "Enfamiliehuse"},
		"#G6":    {"stk", core.F(5), nil, ""},
	} {
		r := rs[id]
		if r.Unit != w.unit || !reflect.DeepEqual(r.A1A3, w.a1a3) || !reflect.DeepEqual(r.Conversions, w.conv) || r.NameDA != w.name {
			t.Errorf("%s: unit %q a1a3 %s conv %v name %q", id, r.Unit, fmtPtr(r.A1A3), r.Conversions, r.NameDA)
		}
		if r.Version != "BR25" {
			t.Errorf("%s version %q", id, r.Version)
		}
	}
	if rs["#G1"].A4 != nil || *rs["#G2"].A4 != 0.1 {
		t.Errorf("a4 with '-' %v", rs["#G1"].A4)
	}
	if rs["#S0001"].GWPUnit != "" || rs["#G4"].GWPUnit != "kg CO2 eq./stk" {
		t.Errorf("gwp units %q %q", rs["#S0001"].GWPUnit, rs["#G4"].GWPUnit)
	}
}

func TestNormalizeUnit(t *testing.T) {
	for in, want := range map[string]string{
		"M3": "m³", "m3": "m³", "m³": "m³", "M2": "m²", "KG": "kg", "STK": "stk", "stk.": "stk", "Stk": "stk",
		" m ": "m", "TON": "ton", "kWh": "kWh", "MJ": "MJ", "KG/M3": "kg/m³", "kg/stk.": "kg/stk",
		"kg/m²/mm": "kg/m²/mm", "g/cm³": "g/cm³", "m² with R=1 m²K/W": "m² with R=1 m²K/W",
		"m (12 mm)": "m (12 mm)", "stk. Ø1000 mm": "stk. Ø1000 mm", "Ton CO2/år": "Ton CO2/år", "": "",
	} {
		if got := NormalizeUnit(in); got != want {
			t.Errorf("NormalizeUnit(%q) = %q, want %q", in, got, want)
		}
	}
}

// The conversion rule: a ratio unit is the key; a bare unit is per declared
// unit; no unit column means kg per declared unit.
func TestMapConversions(t *testing.T) {
	tb := csvTable(t, "id,name,a1a3,unit,f,fu\n"+
		"1,a,1,m3,470,kg/m³\n"+
		"2,b,1,kg,2400,KG/M3\n"+
		"3,c,1,m2,12,kg\n"+
		"4,d,1,m2,12,\n"+
		"5,e,1,,0.03,kg/m²\n"+
		"6,f,1,,0.03,kg\n"+
		"7,g,1,m2,0,kg/m²\n"+
		"8,h,1,m2,5,/m²\n")
	m := map[string]string{"id": "id", "name": "name", "a1a3": "a1a3", "unit": "unit", "conversion_value": "f", "conversion_unit": "fu"}
	rep := mapOK(t, tb, core.DKBR, m)
	rs := byID(t, rep.Release.Resources)
	want := map[string]map[string]float64{
		"1": {"kg/m³": 470}, "2": {"kg/m³": 2400}, "3": {"kg/m²": 12}, "4": nil,
		"5": {"kg/m²": 0.03}, "6": nil, "7": nil, "8": nil,
	}
	for id, w := range want {
		if got := rs[id].Conversions; !reflect.DeepEqual(got, w) {
			t.Errorf("%s: %v, want %v", id, got, w)
		}
	}
	// Rows 4 (no unit), 7 (zero) and 8 (no numerator) are noted; row 6 has
	// no declared unit to restate, which is Tabel 7's #S rows: silent.
	if rep.NoteCount != 3 || rep.Notes[0].Row != 5 || rep.Notes[1].Row != 8 || rep.Notes[2].Row != 9 {
		t.Errorf("notes %v", rep.Notes)
	}
	// Without conversion_unit: kg per declared unit.
	delete(m, "conversion_unit")
	rs = byID(t, mapOK(t, tb, core.DKBR, m).Release.Resources)
	if got := rs["2"].Conversions; !reflect.DeepEqual(got, map[string]float64{"kg/kg": 2400}) {
		t.Errorf("default key: %v", got)
	}
	if got := rs["1"].Conversions; !reflect.DeepEqual(got, map[string]float64{"kg/m³": 470}) {
		t.Errorf("default key: %v", got)
	}
}

func TestMapBadNumbers(t *testing.T) {
	tb := csvTable(t, "id,name,a1a3,a4\n1,a,abc,1\n2,b,1,1 234\n3,c,2,1.234\n4,d,3,12%\n")
	rep := mapFail(t, tb, map[string]string{"id": "id", "name": "name", "a1a3": "a1a3", "a4": "a4"},
		`a1a3: "abc" is not a number`, `a4: "1 234" is not a number`, `a4: "12%" is not a number`)
	if p := rep.Problems[0]; p.Row != 2 || p.Column != "a1a3" {
		t.Errorf("problem %+v", p)
	}
	if rep.ProblemCount != 3 {
		t.Errorf("problems %v", rep.Problems)
	}
	// A comma-decimal file with 1.234: thousands or decimals? Refused with a hint.
	tb = csvTable(t, "id;name;a1a3\n1;a;0,5\n2;b;1.234\n")
	mapFail(t, tb, map[string]string{"id": "id", "name": "name", "a1a3": "a1a3"}, "thousands separator")
}

func TestMapIDs(t *testing.T) {
	tb := csvTable(t, "id,name,a1a3\n,a,1\n-,b,2\nx:y,c,3\n"+strings.Repeat("z", 101)+",d,4\n#G1,e,5\n")
	rep := mapFail(t, tb, map[string]string{"id": "id", "name": "name", "a1a3": "a1a3"}, "the id is missing", "may not contain")
	if rep.ProblemCount != 4 || rep.Problems[0].Row != 2 || rep.Problems[1].Row != 3 {
		t.Errorf("problems %v", rep.Problems)
	}
}

func TestMapDuplicates(t *testing.T) {
	m := map[string]string{"id": "id", "name": "name", "a1a3": "a1a3", "unit": "unit"}
	// Same values, same or different texts: collapsed into the first row.
	tb := csvTable(t, "id,name,a1a3,unit\n#G0164,Oliekedel,1207.85513778074,stk\n#G1,x,1,kg\n"+
		"#G0164,Oliekedel,1207.85513778074,STK\n#G0164,\"Oliekedel, kondenserende\",1207.85513778074,stk\n")
	rep := mapOK(t, tb, core.DKBR, m)
	if rep.Rows != 4 || rep.Resources != 2 || rep.Collapsed != 2 || rep.NoteCount != 1 || rep.Notes[0].Row != 5 {
		t.Fatalf("report %+v", rep)
	}
	if r := byID(t, rep.Release.Resources)["#G0164"]; r.NameDA != "Oliekedel" {
		t.Errorf("kept %q", r.NameDA)
	}
	if !strings.Contains(rep.Notes[0].Msg, `name_da ("Oliekedel" vs "Oliekedel, kondenserende")`) {
		t.Errorf("note %v", rep.Notes[0])
	}
	// Different values: a problem naming both rows and the value.
	tb = csvTable(t, "id,name,a1a3,unit\n#G1,a,1,kg\n#G1,a,2,kg\n#G2,b,1,kg\n#G2,b,1,m2\n")
	rep = mapFail(t, tb, m, "id #G1 repeats row 2 with different values (a1a3 1 vs 2)", `unit "kg" vs "m²"`)
	if rep.Problems[0].Row != 3 || rep.Problems[1].Row != 5 {
		t.Errorf("problems %v", rep.Problems)
	}
}

// A cell #X1234 takes its column's value from the row with id #X1234.
func TestMapReferences(t *testing.T) {
	m := map[string]string{"id": "id", "name": "name", "a1a3": "a1a3", "unit": "unit", "conversion_value": "mass"}
	tb := csvTable(t, "id,name,a1a3,unit,mass\n"+
		"#G1,Beton,100,M3,2400\n"+
		"#G2,Beton genbrug,#G1,#G1,#G1\n"+
		"#G3,Beton igen,#G2,m3,#G2\n"+ // a chain: #G3 -> #G2 -> #G1
		"#G4,#G1,5,kg,1\n")
	rep := mapOK(t, tb, core.DKBR, m)
	rs := byID(t, rep.Release.Resources)
	for _, id := range []string{"#G2", "#G3"} {
		r := rs[id]
		if r.A1A3 == nil || *r.A1A3 != 100 || r.Unit != "m³" || r.Conversions["kg/m³"] != 2400 {
			t.Errorf("%s: %+v", id, r)
		}
	}
	if rs["#G4"].NameDA != "Beton" || rep.References != 6 {
		t.Errorf("name by reference %q, %d references", rs["#G4"].NameDA, rep.References)
	}
	// The id column is never a reference.
	if _, ok := rs["#G1"]; !ok {
		t.Error("#G1 missing")
	}

	tb = csvTable(t, "id,name,a1a3\n#G1,a,#G9\n#G2,b,#G3\n#G3,c,#G2\n#G4,d,#G4\n")
	rep = mapFail(t, tb, map[string]string{"id": "id", "name": "name", "a1a3": "a1a3"},
		"refers to #G9, which is not an id in the file", "reference cycle: #G3 -> #G2 -> #G3", "reference cycle: #G4 -> #G4")
	if rep.Problems[0].Row != 2 || rep.Problems[0].Column != "a1a3" {
		t.Errorf("problem %+v", rep.Problems[0])
	}
}

func TestMapSafety(t *testing.T) {
	tb := csvTable(t, "id,name,a1a3,link\n1,\"=HYPERLINK(\"\"http://x\"\")\",1,javascript:alert(1)\n2,b,2,https://example.org/p?id=2\n3,c,3,see report\n")
	m := map[string]string{"id": "id", "name": "name", "a1a3": "a1a3", "origin": "link"}
	mapFail(t, tb, m, "looks like a spreadsheet formula")
	tb.Rows = tb.Rows[1:]
	rep := mapOK(t, tb, core.DKBR, m)
	rs := byID(t, rep.Release.Resources)
	if rs["2"].Origin != "https://example.org/p?id=2" || rs["3"].Origin != "" || rep.NoteCount != 1 {
		t.Errorf("origins %q %q notes %v", rs["2"].Origin, rs["3"].Origin, rep.Notes)
	}
}

// At most MaxProblems are listed; all are counted; the error names the first.
func TestMapProblemCap(t *testing.T) {
	var b strings.Builder
	b.WriteString("id,name,a1a3\n")
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&b, "%d,x,bad%d\n", i, i)
	}
	rep := mapFail(t, csvTable(t, b.String()), map[string]string{"id": "id", "name": "name", "a1a3": "a1a3"})
	if len(rep.Problems) != MaxProblems || rep.ProblemCount != 50 {
		t.Errorf("%d listed, %d counted", len(rep.Problems), rep.ProblemCount)
	}
	_, err := Map(csvTable(t, b.String()), core.DKBR, map[string]string{"id": "id", "name": "name", "a1a3": "a1a3"}, "")
	if !strings.Contains(err.Error(), `row 2, column "a1a3": a1a3: "bad0" is not a number`) || !strings.Contains(err.Error(), "and 45 more") {
		t.Errorf("error %v", err)
	}
}

func TestMapVersion(t *testing.T) {
	tb := csvTable(t, "id,name,a1a3,v\n1,a,1,BR18\n2,b,2,\n")
	m := map[string]string{"id": "id", "name": "name", "a1a3": "a1a3", "version": "v"}
	rep, err := Map(tb, core.DKBR, m, "")
	if err != nil {
		t.Fatal(err)
	}
	rs := rep.Release.Resources
	if rep.Release.Version != "BR18" || rs[0].Version != "BR18" || rs[1].Version != "" {
		t.Errorf("versions %q %q %q", rep.Release.Version, rs[0].Version, rs[1].Version)
	}
	rep = mapOK(t, tb, core.DKBR, m)
	if rep.Release.Version != "BR25" || rep.Release.Resources[1].Version != "BR25" || rep.Release.Resources[0].Version != "BR18" {
		t.Errorf("given version: %q", rep.Release.Version)
	}
}

func TestFieldsAndForm(t *testing.T) {
	want := []string{"id", "name", "name_sv", "name_en", "name_da", "name_de", "name_de_en", "description", "description_sv", "description_en",
		"description_da", "applicability_sv", "applicability_en", "synonyms", "synonyms_en", "a1a3", "a1a3_conservative",
		"a4", "a5_1", "unit", "gwp_unit", "conversion_value", "conversion_unit", "category", "category_en", "category_code",
		"version", "conservative_factor", "waste_factor", "biogenic_carbon", "service_life", "origin"}
	var got []string
	for _, f := range Fields() {
		if f.Label == "" {
			t.Errorf("%s has no label", f.Field)
		}
		got = append(got, f.Field)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fields %q", got)
	}
	b, _ := json.Marshal(Fields()[0])
	if string(b) != `{"field":"id","label":"Resource id (required; unique in the file)"}` {
		t.Errorf("json %s", b)
	}
	form := map[string][]string{"map.id": {"Sorterings ID"}, "map.name": {"Navn DK", "x"}, "map.a4": {" "}, "catalog": {"dkbr"}}
	if m := MappingFromForm(form); !reflect.DeepEqual(m, map[string]string{"id": "Sorterings ID", "name": "Navn DK"}) {
		t.Errorf("form map %v", m)
	}
	// Every field maps to something when the headers spell the field names.
	if m := Suggest(want); len(m) != len(want) || m["a5_1"] != "a5_1" {
		t.Errorf("Suggest %v", m)
	}
	pb, _ := json.Marshal(Problem{Row: 3, Column: "a1a3", Msg: "bad"})
	if string(pb) != `{"row":3,"column":"a1a3","message":"bad"}` {
		t.Errorf("problem json %s", pb)
	}
}

// Every mapped field lands in its Resource field.
func TestMapAllFields(t *testing.T) {
	var hdr, val []string
	m := map[string]string{}
	for i, f := range Fields() {
		hdr = append(hdr, "H "+f.Field)
		m[f.Field] = "H " + f.Field
		switch f.Field {
		case "id":
			val = append(val, "#X1")
		case "a1a3", "a1a3_conservative", "a4", "a5_1", "conservative_factor", "waste_factor", "biogenic_carbon", "conversion_value":
			val = append(val, fmt.Sprint(i))
		case "unit":
			val = append(val, "M2")
		case "conversion_unit":
			val = append(val, "kg")
		case "origin":
			val = append(val, "https://example.org/x")
		default:
			val = append(val, "v "+f.Field)
		}
	}
	tb := csvTable(t, strings.Join(hdr, ";")+"\n"+strings.Join(val, ";")+"\n")
	r := mapOK(t, tb, core.National, m).Release.Resources[0]
	want := core.Resource{ID: "#X1", Catalog: core.National,
		NameSV: "v name_sv", NameEN: "v name_en", NameDA: "v name_da", NameDE: "v name_de",
		DescriptionSV: "v description_sv", DescriptionEN: "v description_en", DescriptionDA: "v description_da",
		ApplicabilitySV: "v applicability_sv", ApplicabilityEN: "v applicability_en", Synonyms: "v synonyms", SynonymsEN: "v synonyms_en",
		A1A3: core.F(15), A1A3Conservative: core.F(16), A4: core.F(17), A51: core.F(18), GWPUnit: "v gwp_unit", Unit: "m²",
		Conversions: map[string]float64{"kg/m²": 21}, Category: "v category", CategoryEN: "v category_en", CategoryCode: "v category_code",
		Version: "v version", ConservativeFactor: core.F(27), WasteFactor: core.F(28), BiogenicCarbon: core.F(29),
		ServiceLife: "v service_life", Origin: "https://example.org/x"}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("resource\n got %+v\nwant %+v", r, want)
	}
}

// Tabel 7's Navn DE/ENG holds ÖKOBAUDAT's German names on #G rows, English
// names on BR25's EPD Danmark #B rows and '-' on the others: a German name
// is never stored (and so never shown) as English.
func TestMapNavnDEENG(t *testing.T) {
	tb := csvTable(t, "Sorterings ID,Navn DE/ENG,Navn DK,a1a3\n"+
		"#G0740,\"Betonrohr, bewehrt\",\"Betonrør, armeret\",1\n"+
		"#g0008,Getuftete Teppichfliesen,Tæppeflise,2\n"+
		"#B1632,Circular ventilation ducts,Cirkulære ventilationskanaler,3\n"+
		"#D1498,-,\"Tagsten, tegl\",4\n"+
		"#S0001,,Enfamiliehuse,5\n")
	m := map[string]string{"id": "Sorterings ID", "name": "Navn DK", "name_de_en": "Navn DE/ENG", "a1a3": "a1a3"}
	if got := Suggest(tb.Headers); got["name_de_en"] != "Navn DE/ENG" || got["name_en"] != "" {
		t.Errorf("Suggest %v", got)
	}
	res := byID(t, mapOK(t, tb, core.DKBR, m).Release.Resources)
	for id, w := range map[string][3]string{ // da, de, en
		"#G0740": {"Betonrør, armeret", "Betonrohr, bewehrt", ""},
		"#g0008": {"Tæppeflise", "Getuftete Teppichfliesen", ""},
		"#B1632": {"Cirkulære ventilationskanaler", "", "Circular ventilation ducts"},
		"#D1498": {"Tagsten, tegl", "", ""},
		"#S0001": {"Enfamiliehuse", "", ""},
	} {
		r := res[id]
		if r.NameDA != w[0] || r.NameDE != w[1] || r.NameEN != w[2] {
			t.Errorf("%s: da %q de %q en %q, want %q", id, r.NameDA, r.NameDE, r.NameEN, w)
		}
		r.Localize(core.English)
		if r.Name == r.NameDE && r.NameDE != "" {
			t.Errorf("%s: lang=en shows the German name %q", id, r.Name)
		}
	}
	// An explicit name_en wins over the column.
	m["name_en"] = "Navn DK"
	if r := byID(t, mapOK(t, tb, core.DKBR, m).Release.Resources)["#B1632"]; r.NameEN != "Cirkulære ventilationskanaler" {
		t.Errorf("explicit name_en: %q", r.NameEN)
	}
}

// MapEach hands over what Map makes, in order and in chunks of n; a
// reference or a repeated id reaches across chunks; every row is let go
// once mapped but those references read; a file with a problem hands
// nothing over, and an error of each stops the mapping.
func TestMapEach(t *testing.T) {
	m := map[string]string{"id": "id", "name": "name", "a1a3": "a1a3", "unit": "unit"}
	text := "id,name,a1a3,unit\n" +
		"#G1,Beton,100,M3\n#G2,Tegl,2,kg\n#G3,Træ,3,kg\n#G1,Beton,100,m3\n" + // #G1 repeated in the second chunk
		"#G4,Genbrug,#G1,#G1\n#G5,Glas,5,kg\n#G6,Stål,6,kg\n" // #G4 reads #G1 from the first chunk
	whole := mapOK(t, csvTable(t, text), core.DKBR, m).Release.Resources

	tb := csvTable(t, text)
	var chunks [][]core.Resource
	rep, err := MapEach(tb, core.DKBR, m, "BR25", 2, func(rs []core.Resource) error {
		chunks = append(chunks, rs)
		return nil
	})
	if err != nil || rep.Resources != 6 || rep.Collapsed != 1 || rep.References != 2 || rep.Version != "BR25" {
		t.Fatalf("report %+v, %v", rep, err)
	}
	var all []core.Resource
	for _, c := range chunks {
		if len(c) > 2 {
			t.Errorf("a chunk of %d", len(c))
		}
		all = append(all, c...)
	}
	if len(chunks) != 3 || !reflect.DeepEqual(all, whole) {
		t.Errorf("chunks %v\nwant %v", chunks, whole)
	}
	for i, row := range tb.Rows {
		if held := row.Cell(0).Text == "#G1" && i == 0; held != (row.Cells != nil) {
			t.Errorf("row %d (%v): kept %v", row.Num, row.Cells, row.Cells != nil)
		}
	}

	// A problem in the third chunk: the file is refused before anything
	// is handed over, and its rows stay.
	handed := 0
	tb = csvTable(t, text+"#G7,Sten,x,kg\n#G8,Sand,8,kg\n")
	_, err = MapEach(tb, core.DKBR, m, "BR25", 3, func(rs []core.Resource) error {
		handed += len(rs)
		return nil
	})
	if core.KindOf(err) != core.KindInvalid || handed != 0 || tb.Rows[len(tb.Rows)-1].Cells == nil {
		t.Errorf("a problem on row 9: %d handed over, %v", handed, err)
	}
	stop := errors.New("stop")
	calls := 0
	if _, err := MapEach(csvTable(t, text), core.DKBR, m, "", 1, func([]core.Resource) error { calls++; return stop }); err != stop || calls != 1 {
		t.Errorf("each's error: %v after %d calls", err, calls)
	}
}
