package core

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Refinements shared by search and listing: filters on category, declared
// unit and impact values, a sort on an impact value, and facet counts over
// the whole match set. docs/SEARCH.md describes them for clients.

// MaxMatchSet caps the match set a search refines, counts and facets: the
// best MaxMatchSet full-text matches by relevance (plus the vector hits
// above the floor). Beyond it, totals and facets count those only and a
// note says so. The real catalogs are far smaller (a few hundred resources).
const MaxMatchSet = 10000

// ImpactFields are the sortable and range-filterable values, by their
// Resource JSON field names (core.Impact.Field).
var ImpactFields = []string{"a1a3", "a1a3_conservative", "a4", "a5_1"}

// FacetFields are the fields facets count.
var FacetFields = []string{"category", "unit", "catalog"}

// ImpactByField returns the impact whose value a Resource JSON field holds.
func ImpactByField(field string) (Impact, bool) {
	switch field {
	case "a1a3":
		return ImpactTypical, true
	case "a1a3_conservative":
		return ImpactConservative, true
	case "a4":
		return ImpactA4, true
	case "a5_1":
		return ImpactA51, true
	}
	return "", false
}

// SortSpec orders results by an impact value instead of relevance (search)
// or id (listing). The zero value keeps the default order.
type SortSpec struct {
	Impact Impact
	Desc   bool
}

// IsSet reports whether a sort was asked for.
func (s SortSpec) IsSet() bool { return s.Impact != "" }

// String is the sort parameter: the field, with a leading "-" when descending.
func (s SortSpec) String() string {
	if !s.IsSet() {
		return ""
	}
	if s.Desc {
		return "-" + s.Impact.Field()
	}
	return s.Impact.Field()
}

// ParseSort reads a sort parameter: a1a3, a1a3_conservative, a4 or a5_1,
// with a leading "-" for descending; empty keeps the default order.
func ParseSort(s string) (SortSpec, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return SortSpec{}, nil
	}
	desc := strings.HasPrefix(s, "-")
	imp, ok := ImpactByField(strings.TrimPrefix(s, "-"))
	if !ok {
		return SortSpec{}, Invalidf("unknown sort %q: use one of %s, with a leading - for descending (e.g. sort=-a1a3)", s, strings.Join(ImpactFields, ", "))
	}
	return SortSpec{Impact: imp, Desc: desc}, nil
}

// Range keeps resources whose impact value lies within [Min, Max]; a nil
// bound is open. A resource without the value is excluded.
type Range struct {
	Impact   Impact
	Min, Max *float64
}

// RangeParams are the names of the impact-range parameters, <field>_min
// and <field>_max for each of ImpactFields, as REST and MCP take them.
var RangeParams = func() []string {
	ps := make([]string, 0, 2*len(ImpactFields))
	for _, f := range ImpactFields {
		ps = append(ps, f+"_min", f+"_max")
	}
	return ps
}()

// Ranges builds the impact ranges from the range parameters: bound returns
// a parameter's value, nil when it is absent, or its error. A field gets a
// Range when either of its bounds is set; Normalize checks them.
func Ranges(bound func(param string) (*float64, error)) ([]Range, error) {
	var out []Range
	for _, field := range ImpactFields {
		imp, _ := ImpactByField(field)
		rg := Range{Impact: imp}
		var err error
		if rg.Min, err = bound(field + "_min"); err != nil {
			return nil, err
		}
		if rg.Max, err = bound(field + "_max"); err != nil {
			return nil, err
		}
		if rg.Min != nil || rg.Max != nil {
			out = append(out, rg)
		}
	}
	return out, nil
}

// BoundError is the error of a range parameter whose value (got, as the
// client wrote it) is not a finite number.
func BoundError(param, got string) error {
	return Invalidf("%s must be a number (kg CO2e per declared unit, e.g. %s=100), got %s", param, param, got)
}

// ParseBound reads a range parameter written as text; blank is absent.
func ParseBound(param, v string) (*float64, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, nil
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return nil, BoundError(param, strconv.Quote(v))
	}
	return &x, nil
}

// Refine is what a client asks of a match set beyond relevance.
type Refine struct {
	// Category keeps resources whose category (either language) equals it,
	// ignoring case; Unit those whose declared unit equals it (m2 = m²).
	Category string
	Unit     string
	Ranges   []Range
	Sort     SortSpec
	// Facets lists the FacetFields to count over the whole match set.
	Facets []string
}

// Filtering reports whether any filter is set.
func (f *Refine) Filtering() bool {
	return f.Category != "" || f.Unit != "" || len(f.Ranges) > 0
}

// Active reports whether anything beyond the default order and paging is asked.
func (f *Refine) Active() bool {
	return f.Filtering() || f.Sort.IsSet() || len(f.Facets) > 0
}

// Normalize trims the filters and checks the ranges and facets.
func (f *Refine) Normalize() error {
	f.Category = strings.TrimSpace(f.Category)
	f.Unit = strings.TrimSpace(f.Unit)
	seen := map[Impact]bool{}
	for _, r := range f.Ranges {
		if seen[r.Impact] {
			return Invalidf("%s has more than one range", r.Impact.Field())
		}
		seen[r.Impact] = true
		if r.Min != nil && r.Max != nil && *r.Min > *r.Max {
			return Invalidf("%s_min (%s) is above %s_max (%s)", r.Impact.Field(), fmtFloat(*r.Min), r.Impact.Field(), fmtFloat(*r.Max))
		}
	}
	var facets []string
	for _, name := range f.Facets {
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "" {
			continue
		}
		ok := false
		for _, ff := range FacetFields {
			ok = ok || ff == name
		}
		if !ok {
			return Invalidf("unknown facet %q: use %s", name, strings.Join(FacetFields, ", "))
		}
		if !contains(facets, name) {
			facets = append(facets, name)
		}
	}
	f.Facets = facets
	return nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func fmtFloat(v float64) string { return fmt.Sprint(v) }

// Keep reports whether a resource passes the filters.
func (f *Refine) Keep(r *Resource) bool {
	if f.Category != "" && !strings.EqualFold(r.Category, f.Category) && !strings.EqualFold(r.CategoryEN, f.Category) {
		return false
	}
	if f.Unit != "" && CanonUnit(r.Unit) != CanonUnit(f.Unit) {
		return false
	}
	for _, rg := range f.Ranges {
		v, ok := rg.Impact.Value(r)
		if !ok || (rg.Min != nil && v < *rg.Min) || (rg.Max != nil && v > *rg.Max) {
			return false
		}
	}
	return true
}

// CanonUnit makes unit spellings comparable: m3 = m³, m2 = m², litre =
// liter, case and surrounding spaces ignored.
func CanonUnit(u string) string {
	u = strings.ToLower(strings.TrimSpace(u))
	return strings.NewReplacer("m3", "m³", "m2", "m²", "litre", "liter").Replace(u)
}

// DisplayUnit is the preferred spelling of a unit (superscripts for m² and m³).
func DisplayUnit(u string) string {
	return strings.NewReplacer("m3", "m³", "m2", "m²").Replace(strings.TrimSpace(u))
}

// CompareImpact orders two resources by the sort's impact value: -1 when a
// comes first. A resource without the value comes after every resource
// with one, in either direction; two without it compare equal (the caller's
// stable sort keeps their previous order).
func CompareImpact(a, b *Resource, s SortSpec) int {
	va, okA := s.Impact.Value(a)
	vb, okB := s.Impact.Value(b)
	switch {
	case !okA && !okB:
		return 0
	case !okA:
		return 1
	case !okB:
		return -1
	case va == vb:
		return 0
	case (va < vb) != s.Desc:
		return -1
	}
	return 1
}

// UnitCount is a declared unit and how many resources of a set use it.
type UnitCount struct {
	Unit  string
	Count int
}

// CheckSortUnits refuses a sort over a set declared in several units: the
// values are per declared unit, so ordering kilograms among cubic metres
// would mislead. The message names the units found with their counts.
func CheckSortUnits(rs []*Resource, s SortSpec) error {
	if !s.IsSet() {
		return nil
	}
	units := countUnits(rs)
	if len(units) <= 1 {
		return nil
	}
	parts := make([]string, len(units))
	for i, u := range units {
		parts[i] = fmt.Sprintf("%s (%d)", u.Unit, u.Count)
	}
	return Invalidf("sort=%s orders values per declared unit, but the matches are declared in %d units: %s; add unit=<one of them> to sort within one unit",
		s, len(units), strings.Join(parts, ", "))
}

// countUnits counts the declared units of rs by canonical spelling, most
// frequent first; a resource without a unit counts as "(none)".
func countUnits(rs []*Resource) []UnitCount {
	n := map[string]int{}
	shown := map[string]string{}
	for _, r := range rs {
		c := CanonUnit(r.Unit)
		n[c]++
		d := DisplayUnit(r.Unit)
		if d == "" {
			d = "(none)"
		}
		if old, ok := shown[c]; !ok || d < old {
			shown[c] = d
		}
	}
	out := make([]UnitCount, 0, len(n))
	for c, k := range n {
		out = append(out, UnitCount{Unit: shown[c], Count: k})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Unit < out[j].Unit
	})
	return out
}

// FacetValue is one value of a facet and how many matches hold it.
type FacetValue struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

// Facets maps a facet field to its values, most frequent first (then by
// value). Counts cover the whole match set after the filters, not the page.
type Facets map[string][]FacetValue

// CountFacets counts the fields over rs. Categories are counted by the
// title in lang (falling back to the other language), units by canonical
// spelling shown as DisplayUnit, catalogs by id.
func CountFacets(rs []*Resource, fields []string, lang Lang) Facets {
	if len(fields) == 0 {
		return nil
	}
	out := Facets{}
	for _, f := range fields {
		switch f {
		case "unit":
			vals := []FacetValue{}
			for _, u := range countUnits(rs) {
				vals = append(vals, FacetValue{Value: u.Unit, Count: u.Count})
			}
			out[f] = vals
		case "category", "catalog":
			n := map[string]int{}
			for _, r := range rs {
				n[facetValue(r, f, lang)]++
			}
			vals := make([]FacetValue, 0, len(n))
			for v, k := range n {
				vals = append(vals, FacetValue{Value: v, Count: k})
			}
			sort.Slice(vals, func(i, j int) bool {
				if vals[i].Count != vals[j].Count {
					return vals[i].Count > vals[j].Count
				}
				return vals[i].Value < vals[j].Value
			})
			out[f] = vals
		}
	}
	return out
}

func facetValue(r *Resource, field string, lang Lang) string {
	if field == "catalog" {
		return string(r.Catalog)
	}
	c := first(r.Category, r.CategoryEN)
	if lang == English {
		c = first(r.CategoryEN, r.Category)
	}
	if c == "" {
		return "(none)"
	}
	return c
}

// Vocabulary is the categories (both languages) and declared units of a
// set of live resources, to tell an unknown filter value from one that
// matches nothing here.
type Vocabulary struct {
	categories map[string]string // lower case -> as written
	units      map[string]string // canonical -> display
}

// NewVocabulary returns an empty vocabulary.
func NewVocabulary() *Vocabulary {
	return &Vocabulary{categories: map[string]string{}, units: map[string]string{}}
}

// Add records a resource's categories and unit.
func (v *Vocabulary) Add(r *Resource) {
	for _, c := range []string{r.Category, r.CategoryEN} {
		if c = strings.TrimSpace(c); c != "" {
			v.categories[strings.ToLower(c)] = c
		}
	}
	if u := strings.TrimSpace(r.Unit); u != "" {
		v.units[CanonUnit(u)] = DisplayUnit(u)
	}
}

// Check refuses a category or unit filter that no resource of the
// vocabulary holds, naming the closest valid values.
func (v *Vocabulary) Check(f *Refine, catalogs []CatalogID) error {
	where := catalogNames(catalogs)
	if f.Category != "" {
		if _, ok := v.categories[strings.ToLower(f.Category)]; !ok {
			return Invalidf("unknown category %q in %s: %s (categories match in Swedish or English, ignoring case; facets=category lists those of a search)",
				f.Category, where, suggestion(f.Category, values(v.categories)))
		}
	}
	if f.Unit != "" {
		if _, ok := v.units[CanonUnit(f.Unit)]; !ok {
			return Invalidf("unknown unit %q in %s: %s (m2 = m², m3 = m³; facets=unit lists those of a search)",
				f.Unit, where, suggestion(f.Unit, values(v.units)))
		}
	}
	return nil
}

func catalogNames(cs []CatalogID) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = string(c)
	}
	if len(s) == 1 {
		return "catalog " + s[0]
	}
	return "catalogs " + strings.Join(s, ", ")
}

func values(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// maxSuggestions bounds the values an unknown-filter message names.
const maxSuggestions = 5

// suggestion names the valid values closest to s: those containing it or
// contained in it (ignoring case), then those within an edit distance of
// a third of its length (at least 2); when none is close, the first valid
// values in alphabetical order.
func suggestion(s string, valid []string) string {
	if len(valid) == 0 {
		return "there are none"
	}
	ls := strings.ToLower(s)
	type cand struct {
		v string
		d int
	}
	var close []cand
	limit := max(2, utf8.RuneCountInString(ls)/3)
	for _, v := range valid {
		lv := strings.ToLower(v)
		d := editDistance(ls, lv)
		if strings.HasPrefix(lv, ls) || strings.Contains(lv, ls) || strings.Contains(ls, lv) {
			d = min(d, 1)
		}
		if d <= limit {
			close = append(close, cand{v, d})
		}
	}
	sort.SliceStable(close, func(i, j int) bool { return close[i].d < close[j].d })
	quote := func(vs []string) string {
		q := make([]string, len(vs))
		for i, v := range vs {
			q[i] = fmt.Sprintf("%q", v)
		}
		return strings.Join(q, ", ")
	}
	if len(close) > 0 {
		vs := make([]string, 0, maxSuggestions)
		for _, c := range close[:min(len(close), maxSuggestions)] {
			vs = append(vs, c.v)
		}
		return "did you mean " + quote(vs) + "?"
	}
	n := min(len(valid), 2*maxSuggestions)
	more := ""
	if len(valid) > n {
		more = fmt.Sprintf(" and %d more", len(valid)-n)
	}
	return fmt.Sprintf("none is close; valid values are %s%s", quote(valid[:n]), more)
}

// editDistance is the Levenshtein distance between a and b in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
