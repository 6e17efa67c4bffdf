package boverket

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Export is one answer of GetAllResources: the whole catalog in one culture.
// Only the fields the mapping reads are declared; the rest is ignored. Field
// names match the wire names case-insensitively (ResourceID reads ResourceId).
type Export struct {
	Location      string
	Culture       string
	Publisher     string
	Version       string
	PublishedDate string
	Categories    []CategoryNode
	Resources     []ExportResource
}

// CategoryNode is a node of the export's category tree. A leaf's Id is the
// category code of the product-sheet link.
type CategoryNode struct {
	ID       Text
	Title    string
	Children []CategoryNode
}

// ExportResource is one resource of an export.
type ExportResource struct {
	ResourceID    Text
	Version       string
	SourceVersion string
	Name          string
	Names         struct{ SV, EN string }
	InventoryUnit string
	Synonyms      string

	TechnologyDescriptionAndIncludedProcesses string
	TechnologicalApplicability                string

	Conversions    []Conversion
	Categories     []Classification
	DataItems      []DataItem
	TransportItems []TransportItem

	ConservativeDataConversionFactor Number
	WasteFactor                      Number
	CalculatedBiogenicCarbon         Number
	RefServiceLifeNormal             string
}

// Conversion restates the declared unit, e.g. {Volume, kg/m³, 700}.
type Conversion struct {
	Field string
	Unit  string
	Value Number
}

// Classification is one category of a resource: ClassificationType is
// "Boverket" (the publisher's own categories) or "BK04".
type Classification struct {
	ClassificationType string
	Code               Text
	Text               string
}

// DataItem is one environmental indicator with its values per module.
type DataItem struct {
	PropertyCode     string
	PropertyUnitCode string
	DataValueItems   []DataValueItem
}

// DataValueItem is one module's value ("A1-A3 Typical", "A4", ...).
type DataValueItem struct {
	DataModuleCode string
	Value          Number
}

// TransportItem is one generic A4 transport leg.
type TransportItem struct {
	Name               string
	GenericDistance    Number
	TransportTypeName  string
	FuelTypeName       string
	FuelTypeResourceID Text
}

// DecodeExport parses an export. It fails only on malformed JSON or on a
// field of an impossible type; missing fields are left empty.
func DecodeExport(body []byte) (*Export, error) {
	var e Export
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&e); err != nil {
		return nil, err
	}
	return &e, nil
}

// Text is a JSON string or number read as its text: the publisher sends ids
// as numbers (ResourceId, category Id) and codes as strings, and a change of
// either would otherwise fail the whole export.
type Text string

// UnmarshalJSON accepts a string, a number or null.
func (t *Text) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*t = ""
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = Text(strings.TrimSpace(s))
	default:
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("want a string or a number, got %s", b)
		}
		*t = Text(n.String())
	}
	return nil
}

// Number is an optional JSON number. Valid is false when the field is
// missing, null or an empty string, so "not published" stays distinct from 0.
type Number struct {
	V     float64
	Valid bool
}

// UnmarshalJSON accepts a number, a numeric string (decimal comma too) or null.
func (n *Number) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*n = Number{}
	switch {
	case bytes.Equal(b, []byte("null")):
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, ok := parseNumber(s)
		if !ok && strings.TrimSpace(s) != "" {
			return fmt.Errorf("want a number, got %q", s)
		}
		*n = Number{V: v, Valid: ok}
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("want a number, got %s", b)
	}
	*n = Number{V: v, Valid: true}
	return nil
}

// Ptr returns the value as an optional float.
func (n Number) Ptr() *float64 {
	if !n.Valid {
		return nil
	}
	v := n.V
	return &v
}

// parseNumber reads a number as people and spreadsheets write it: decimal
// comma or point, spaces or no-break spaces as thousands separators, a
// typographic minus. Blank and "-" mean "no value".
func parseNumber(s string) (float64, bool) {
	s = strings.NewReplacer("\u00a0", "", "\u202f", "", " ", "", "\u2212", "-").Replace(strings.TrimSpace(s))
	if s == "" || s == "-" || s == "–" {
		return 0, false
	}
	comma, point := strings.LastIndex(s, ","), strings.LastIndex(s, ".")
	switch {
	case comma >= 0 && point >= 0 && comma > point: // 1.234,5
		s = strings.ReplaceAll(s, ".", "")
		s = strings.Replace(s, ",", ".", 1)
	case comma >= 0 && point >= 0: // 1,234.5
		s = strings.ReplaceAll(s, ",", "")
	case comma >= 0:
		s = strings.Replace(s, ",", ".", 1)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return v, true
}
