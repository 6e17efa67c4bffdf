package boverket

import (
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/climatesearch/climatesearch/core"
)

// Data module codes of the GWP indicator, compared after foldKey.
var (
	moduleTypical      = foldKey("A1-A3 Typical")
	moduleConservative = foldKey("A1-A3 Conservative")
	moduleA4           = foldKey("A4")
	moduleA51          = foldKey("A5.1")
)

// Mapped is the outcome of mapping one or two cultures.
type Mapped struct {
	// Resources are sorted by id (numerically for the publisher's numeric ids).
	Resources []core.Resource
	// Rejected counts rows without an id, extra rows of an id already seen
	// in the same culture, and ids without an A1-A3 typical value (once per
	// id, not once per culture).
	Rejected int
	// Version is the highest release version seen.
	Version string
}

// record is one resource as one culture publishes it. The JSON exports and
// the workbooks both become records, so both sources share one merge.
type record struct {
	id      string
	version string
	// namesSV/namesEN come from the export's Names map, which every culture
	// carries in full; name is the culture's own Name (or the workbook's).
	namesSV, namesEN, name               string
	description, applicability, synonyms string
	a1a3, a1a3Cons, a4, a51              *float64
	gwpUnit, unit                        string
	consFactor, wasteFactor, biogenic    *float64
	serviceLife                          string
	transports                           []core.Transport
	conversions                          map[string]float64
	category, categoryCode, bk04         string
}

// records is one culture's rows by id.
type records struct {
	byID     map[string]*record
	rejected int
	version  string
}

func newRecords() *records { return &records{byID: map[string]*record{}} }

func (rs *records) add(r *record) {
	if r.id == "" {
		rs.rejected++
		return
	}
	if _, dup := rs.byID[r.id]; dup {
		// A second row of an id is not a resource of its own; the first wins.
		rs.rejected++
		return
	}
	rs.byID[r.id] = r
	if compareVersions(r.version, rs.version) > 0 {
		rs.version = r.version
	}
}

// Merge maps a Swedish and an English export into bilingual resources. Either
// may be nil; the result then holds that culture's fields only. It does no
// I/O, so the whole mapping is testable on the decoded files.
//
// Texts of a language come from that language's export; names fall back to
// the other export's Names map, which carries both languages. When the two
// exports are of different releases, the language-neutral facts (values,
// units, conversions, factors, category code, version) come from the newer
// one, tie Swedish, so a resource never mixes the numbers of two releases.
// Service life, transports and BK04 are worded per language: Swedish first.
func Merge(sv, en *Export) Mapped {
	var svr, enr *records
	if sv != nil {
		svr = exportRecords(sv)
	}
	if en != nil {
		enr = exportRecords(en)
	}
	m := mergeRecords(svr, enr)
	for _, e := range []*Export{sv, en} {
		if e != nil && compareVersions(e.Version, m.Version) > 0 {
			m.Version = e.Version
		}
	}
	return m
}

func exportRecords(e *Export) *records {
	rs := newRecords()
	codes := leafCodes(e.Categories)
	for i := range e.Resources {
		rs.add(exportRecord(&e.Resources[i], e.Version, codes))
	}
	return rs
}

// exportRecord maps one resource of one culture. codes maps the folded
// titles of the export's leaf categories to their ids.
func exportRecord(x *ExportResource, exportVersion string, codes map[string]string) *record {
	r := &record{
		id:            normalizeID(string(x.ResourceID)),
		version:       firstNonEmpty(x.Version, x.SourceVersion, exportVersion),
		namesSV:       x.Names.SV,
		namesEN:       x.Names.EN,
		name:          x.Name,
		description:   x.TechnologyDescriptionAndIncludedProcesses,
		applicability: x.TechnologicalApplicability,
		synonyms:      x.Synonyms,
		unit:          x.InventoryUnit,
		consFactor:    x.ConservativeDataConversionFactor.Ptr(),
		wasteFactor:   x.WasteFactor.Ptr(),
		biogenic:      x.CalculatedBiogenicCarbon.Ptr(),
		serviceLife:   x.RefServiceLifeNormal,
	}
	if item := gwpItem(x.DataItems); item != nil {
		r.gwpUnit = item.PropertyUnitCode
		for _, v := range item.DataValueItems {
			switch foldKey(v.DataModuleCode) {
			case moduleTypical:
				r.a1a3 = v.Value.Ptr()
			case moduleConservative:
				r.a1a3Cons = v.Value.Ptr()
			case moduleA4:
				r.a4 = v.Value.Ptr()
			case moduleA51:
				r.a51 = v.Value.Ptr()
			}
		}
	}
	for _, c := range x.Conversions {
		if c.Value.Valid && strings.TrimSpace(c.Unit) != "" {
			if r.conversions == nil {
				r.conversions = map[string]float64{}
			}
			// Kept as published, even the fuels' "kg/m²" that are MJ per
			// litre: the core refuses a conversion whose numerator is not
			// the declared unit, so a wrong label cannot restate a value.
			r.conversions[strings.TrimSpace(c.Unit)] = c.Value.V
		}
	}
	for _, t := range x.TransportItems {
		r.transports = append(r.transports, core.Transport{
			Name:           t.Name,
			DistanceKm:     t.GenericDistance.V,
			Type:           t.TransportTypeName,
			Fuel:           t.FuelTypeName,
			FuelResourceID: normalizeID(string(t.FuelTypeResourceID)),
		})
	}
	var boverket, bk04 *Classification
	for i := range x.Categories {
		c := &x.Categories[i]
		switch foldKey(c.ClassificationType) {
		case "boverket":
			if boverket == nil { // several are possible (6000000174): the first counts
				boverket = c
			}
		case "bk04":
			if bk04 == nil {
				bk04 = c
			}
		}
	}
	if boverket != nil {
		r.category = boverket.Text
		// From 02.07 the resource carries its code; before, only the title,
		// which names a leaf of the same export's tree.
		r.categoryCode = firstNonEmpty(string(boverket.Code), codes[foldKey(boverket.Text)])
	}
	if bk04 != nil {
		r.bk04 = strings.TrimSpace(strings.TrimSpace(string(bk04.Code)) + " " + strings.TrimSpace(bk04.Text))
	}
	return r
}

// gwpItem returns the global-warming indicator: the item whose property code
// names GWP, else the first item carrying an A1-A3 typical value.
func gwpItem(items []DataItem) *DataItem {
	for i := range items {
		if strings.HasPrefix(foldKey(items[i].PropertyCode), "gwp") {
			return &items[i]
		}
	}
	for i := range items {
		for _, v := range items[i].DataValueItems {
			if foldKey(v.DataModuleCode) == moduleTypical {
				return &items[i]
			}
		}
	}
	return nil
}

// leafCodes maps the folded title of every leaf of a category tree to its id.
// Only leaves count: the roots ("Byggprodukter", "Energislag") are groups,
// not categories a product sheet is filed under.
func leafCodes(nodes []CategoryNode) map[string]string {
	out := map[string]string{}
	var walk func([]CategoryNode)
	walk = func(ns []CategoryNode) {
		for _, n := range ns {
			if len(n.Children) > 0 {
				walk(n.Children)
				continue
			}
			k := foldKey(n.Title)
			if _, seen := out[k]; !seen && k != "" {
				out[k] = strings.TrimSpace(string(n.ID))
			}
		}
	}
	walk(nodes)
	return out
}

// mergeRecords joins the two cultures by id and drops ids without an A1-A3
// typical value.
func mergeRecords(sv, en *records) Mapped {
	var m Mapped
	ids := map[string]bool{}
	for _, rs := range []*records{sv, en} {
		if rs == nil {
			continue
		}
		m.Rejected += rs.rejected
		if compareVersions(rs.version, m.Version) > 0 {
			m.Version = rs.version
		}
		for id := range rs.byID {
			ids[id] = true
		}
	}
	for id := range ids {
		var s, e *record
		if sv != nil {
			s = sv.byID[id]
		}
		if en != nil {
			e = en.byID[id]
		}
		res, ok := mergeRecord(s, e)
		if !ok {
			m.Rejected++
			continue
		}
		m.Resources = append(m.Resources, res)
	}
	sort.Slice(m.Resources, func(i, j int) bool { return lessID(m.Resources[i].ID, m.Resources[j].ID) })
	return m
}

// mergeRecord builds one resource from its Swedish and English records (at
// least one non-nil). ok is false when no A1-A3 typical value is published.
func mergeRecord(sv, en *record) (core.Resource, bool) {
	facts, other := sv, en
	if facts == nil || (en != nil && compareVersions(en.version, sv.version) > 0) {
		facts, other = en, sv
	}
	if facts.a1a3 == nil && other != nil && other.a1a3 != nil {
		// The newer culture lacks the value the other has: use the other's
		// facts whole rather than report the resource as rejected.
		facts, other = other, facts
	}
	if facts.a1a3 == nil {
		return core.Resource{}, false
	}
	get := func(r *record, f func(*record) string) string {
		if r == nil {
			return ""
		}
		return f(r)
	}
	r := core.Resource{
		ID:                 facts.id,
		Catalog:            core.National,
		Source:             core.SourceNational,
		A1A3:               facts.a1a3,
		A1A3Conservative:   facts.a1a3Cons,
		A4:                 facts.a4,
		A51:                facts.a51,
		GWPUnit:            facts.gwpUnit,
		Unit:               facts.unit,
		ConservativeFactor: facts.consFactor,
		WasteFactor:        facts.wasteFactor,
		BiogenicCarbon:     facts.biogenic,
		Conversions:        cloneMap(facts.conversions),
		Version:            facts.version,
		CategoryCode:       firstNonEmpty(facts.categoryCode, get(other, func(r *record) string { return r.categoryCode })),

		NameSV: firstNonEmpty(get(sv, func(r *record) string { return r.namesSV }),
			get(en, func(r *record) string { return r.namesSV }), get(sv, func(r *record) string { return r.name })),
		NameEN: firstNonEmpty(get(en, func(r *record) string { return r.namesEN }),
			get(sv, func(r *record) string { return r.namesEN }), get(en, func(r *record) string { return r.name })),
		DescriptionSV:   get(sv, func(r *record) string { return r.description }),
		DescriptionEN:   get(en, func(r *record) string { return r.description }),
		ApplicabilitySV: get(sv, func(r *record) string { return r.applicability }),
		ApplicabilityEN: get(en, func(r *record) string { return r.applicability }),
		Synonyms:        get(sv, func(r *record) string { return r.synonyms }),
		SynonymsEN:      get(en, func(r *record) string { return r.synonyms }),
		Category:        get(sv, func(r *record) string { return r.category }),
		CategoryEN:      get(en, func(r *record) string { return r.category }),
		ServiceLife: firstNonEmpty(get(sv, func(r *record) string { return r.serviceLife }),
			get(en, func(r *record) string { return r.serviceLife })),
		BK04: firstNonEmpty(get(sv, func(r *record) string { return r.bk04 }),
			get(en, func(r *record) string { return r.bk04 })),
	}
	for _, c := range []*record{sv, en} {
		if c != nil && len(c.transports) > 0 {
			r.Transports = append([]core.Transport(nil), c.transports...)
			break
		}
	}
	r.Normalize()
	return r, true
}

func cloneMap(m map[string]float64) map[string]float64 {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}

// normalizeID turns a published id into its decimal text: "6000000000",
// 6000000000 and 6.0E9 (a spreadsheet's rendering) are one id.
func normalizeID(s string) string {
	s = core.CleanText(s)
	if s == "" {
		return ""
	}
	if _, err := strconv.ParseUint(s, 10, 64); err == nil {
		return strings.TrimLeft(s, "0")
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f >= 0 && f < 1e18 && f == float64(uint64(f)) {
		return strconv.FormatUint(uint64(f), 10)
	}
	return s
}

// lessID orders numeric ids by value, then anything else by text.
func lessID(a, b string) bool {
	if len(a) != len(b) && isDigits(a) && isDigits(b) {
		return len(a) < len(b)
	}
	return a < b
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// compareVersions orders release versions like 02.06.000 by their numeric
// parts; an empty version is older than any other.
func compareVersions(a, b string) int {
	pa, pb := versionParts(a), versionParts(b)
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y int
		if i < len(pa) {
			x = pa[i]
		} else {
			return -1
		}
		if i < len(pb) {
			y = pb[i]
		} else {
			return 1
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return strings.Compare(a, b)
}

func versionParts(v string) []int {
	var parts []int
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return !unicode.IsDigit(r) }) {
		n, err := strconv.Atoi(f)
		if err != nil {
			n = 0
		}
		parts = append(parts, n)
	}
	return parts
}

// foldKey folds a label for matching: lower case, letters and digits only,
// so "A1-A3 Typical", "a1–a3 typical" and " A1 A3 TYPICAL" are one key.
func foldKey(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(core.CleanText(s)) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}
