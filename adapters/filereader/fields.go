package filereader

import (
	"sort"
	"strings"
)

// Field is one Resource field a file column can be mapped to: the
// IngestPreview schema entry.
type Field struct {
	Field string `json:"field"`
	Label string `json:"label"`
}

type fieldKind int

const (
	kindText fieldKind = iota
	kindNumber
	kindUnit
	kindURL
	kindID
)

type fieldDef struct {
	name  string
	label string
	kind  fieldKind
}

// fieldDefs are the mappable fields in display order.
var fieldDefs = []fieldDef{
	{"id", "Resource id (required; unique in the file)", kindID},
	{"name", "Name in the catalog's language: Swedish for national, Danish for dkbr (required, or a name_* field)", kindText},
	{"name_sv", "Name, Swedish", kindText},
	{"name_en", "Name, English", kindText},
	{"name_da", "Name, Danish", kindText},
	{"name_de", "Name, German", kindText},
	{"name_de_en", "Name, German or English by id, as Tabel 7's Navn DE/ENG: German (ÖKOBAUDAT) on #G rows, English on the others", kindText},
	{"description", "Description in the catalog's language", kindText},
	{"description_sv", "Description, Swedish", kindText},
	{"description_en", "Description, English", kindText},
	{"description_da", "Description, Danish", kindText},
	{"applicability_sv", "Applicability, Swedish", kindText},
	{"applicability_en", "Applicability, English", kindText},
	{"synonyms", "Search synonyms, Swedish", kindText},
	{"synonyms_en", "Search synonyms, English", kindText},
	{"a1a3", "GWP A1-A3, typical, kg CO2e per declared unit (required column; '-' or empty = not published)", kindNumber},
	{"a1a3_conservative", "GWP A1-A3, conservative, kg CO2e per declared unit", kindNumber},
	{"a4", "GWP A4 (transport to site), kg CO2e per declared unit", kindNumber},
	{"a5_1", "GWP A5.1 (construction-site waste), kg CO2e per declared unit", kindNumber},
	{"unit", "Declared unit (kg, m², m³, stk, ...)", kindUnit},
	{"gwp_unit", "Unit text of the GWP values (default: kg CO2 eq./<declared unit>)", kindText},
	{"conversion_value", "Conversion factor, e.g. mass per declared unit (Tabel 7: Masse faktor)", kindNumber},
	{"conversion_unit", "Unit of the conversion factor, e.g. kg/m³ (default: kg/<declared unit>)", kindUnit},
	{"category", "Category in the catalog's language", kindText},
	{"category_en", "Category, English", kindText},
	{"category_code", "Category code", kindText},
	{"version", "Release version of the row (default: the dataset version given)", kindText},
	{"conservative_factor", "Conservative factor", kindNumber},
	{"waste_factor", "Waste factor", kindNumber},
	{"biogenic_carbon", "Biogenic carbon", kindNumber},
	{"service_life", "Reference service life", kindText},
	{"origin", "Product sheet or source link (http or https URL)", kindURL},
}

var fieldIndex = func() map[string]fieldDef {
	m := make(map[string]fieldDef, len(fieldDefs))
	for _, f := range fieldDefs {
		m[f.name] = f
	}
	return m
}()

// Fields lists every mappable Resource field with a label, in display
// order: the schema of an ingest preview.
func Fields() []Field {
	out := make([]Field, len(fieldDefs))
	for i, f := range fieldDefs {
		out[i] = Field{Field: f.name, Label: f.label}
	}
	return out
}

// MappingFromForm extracts a column map from form values: every
// `map.<field>` key with a non-empty value (the header). Other keys are
// ignored; a repeated key keeps its first value.
func MappingFromForm(form map[string][]string) map[string]string {
	m := map[string]string{}
	for k, vs := range form {
		field, ok := strings.CutPrefix(k, "map.")
		if !ok || len(vs) == 0 || strings.TrimSpace(vs[0]) == "" {
			continue
		}
		m[field] = vs[0]
	}
	return m
}

// tabel7Headers are the headers of the Danish Tabel 7 (BR18 and BR25),
// folded by foldHeader, and the fields they map to.
var tabel7Headers = map[string]string{
	"sorterings id":                  "id",
	"navn dk":                        "name",
	"navn de/eng":                    "name_de_en",
	"global opvarmning, modul a1-a3": "a1a3",
	"deklareret enhed (fu)":          "unit",
	"masse faktor":                   "conversion_value",
	"masse enhed":                    "conversion_unit",
	"url (link)":                     "origin",
}

// Suggest proposes a column map for the headers: the Danish Tabel 7
// headers (BR18 and BR25), and headers that spell a field name or label.
// The operator confirms or edits it; Map never guesses on its own.
func Suggest(headers []string) map[string]string {
	m := map[string]string{}
	taken := map[string]bool{}
	for _, h := range headers {
		k := foldHeader(h)
		field, ok := tabel7Headers[k]
		if !ok {
			if f, known := fieldIndex[strings.ReplaceAll(k, " ", "_")]; known {
				field, ok = f.name, true
			}
		}
		if !ok {
			for _, f := range fieldDefs {
				if foldHeader(f.label) == k {
					field, ok = f.name, true
					break
				}
			}
		}
		if ok && !taken[field] {
			m[field] = h
			taken[field] = true
		}
	}
	return m
}

func foldHeader(s string) string { return strings.ToLower(cleanHeader(s)) }

// knownFields lists the field names for messages.
func knownFields() string {
	names := make([]string, 0, len(fieldDefs))
	for _, f := range fieldDefs {
		names = append(names, f.name)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
