package compare

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/climatesearch/climatesearch/core"
)

// Catalog walks the live resources of catalogs (lookup.Service does).
type Catalog interface {
	Each(ctx context.Context, catalogs []core.CatalogID, fn func(core.Resource) error) error
}

// Finder is a full-text search (search.Service does).
type Finder interface {
	Search(ctx context.Context, req core.SearchRequest) (core.SearchResponse, error)
}

// nameMatches is how many full-text hits on the head of the resource's
// name are considered besides its category and BK04 class.
const nameMatches = 30

// Alternatives finds what could replace a resource with a lower climate
// impact. Candidates are the live resources of the chosen catalogs that
// share its category or BK04 class, or that a full-text search of the head
// of its name finds; each is stated per one unit with the conversions compare uses, and
// one that cannot be is left out (and counted in a note), never shown in
// another unit. The lower ones are returned, the resource's siblings first,
// then by value ascending; equal values by key.
func (s *Service) Alternatives(ctx context.Context, req core.AlternativesRequest) (core.Alternatives, error) {
	if strings.TrimSpace(req.Ref) == "" {
		return core.Alternatives{}, core.Invalidf("a resource id is required: catalog:id such as national:6000000032")
	}
	limit := req.Limit
	switch {
	case limit == 0:
		limit = core.DefaultAlternatives
	case limit < 0 || limit > core.MaxAlternatives:
		return core.Alternatives{}, core.Invalidf("limit must be between 1 and %d", core.MaxAlternatives)
	}
	impact := req.Impact
	if impact == "" {
		impact = core.ImpactTypical
	}
	if s.catalog == nil || s.finder == nil {
		return core.Alternatives{}, core.Unavailablef(nil, "alternatives are not configured")
	}
	r, err := s.resolver.Resolve(ctx, req.Ref)
	if err != nil {
		return core.Alternatives{}, err
	}
	v0, ok := impact.Value(&r)
	if !ok {
		return core.Alternatives{}, core.Invalidf("%s does not publish %s (impact %s); choose another impact", r.Ref(), impact.Field(), impact)
	}
	unit := strings.TrimSpace(req.Unit)
	if unit == "" {
		unit = r.Unit
	}
	f0, ok := Factor(&r, unit)
	if !ok {
		return core.Alternatives{}, core.Invalidf("unit %q cannot apply to %s", unit, describe(&r))
	}
	unit = Display(unit)
	catalogs := req.Catalogs
	if len(catalogs) == 0 {
		catalogs = []core.CatalogID{r.Catalog}
	}
	base := round(v0 * f0)

	// Gather the candidates and why each is comparable.
	reasons := map[core.Key][]string{}
	found := map[core.Key]core.Resource{}
	self := r.Key()
	bk := bk04Class(r.BK04)
	err = s.catalog.Each(ctx, catalogs, func(c core.Resource) error {
		if c.Key() == self {
			return nil
		}
		var why []string
		if sameCategory(&r, &c) {
			if sibling(&r, &c) {
				why = append(why, core.ReasonSibling)
			}
			why = append(why, core.ReasonCategory)
		}
		if bk != "" && bk04Class(c.BK04) == bk {
			why = append(why, core.ReasonBK04)
		}
		if len(why) > 0 {
			reasons[c.Key()] = why
			found[c.Key()] = c
		}
		return nil
	})
	if err != nil {
		return core.Alternatives{}, err
	}
	// The name's head ("Aluminiumprofiler" of "Aluminiumprofiler, primär"):
	// the qualifiers after it ("primär", "lösull") match unrelated products.
	if head := nameHead(ownName(&r)); head != "" {
		res, err := s.finder.Search(ctx, core.SearchRequest{Query: head, Lang: req.Lang, Catalogs: catalogs, Limit: nameMatches})
		if err != nil {
			return core.Alternatives{}, err
		}
		for _, h := range res.Results {
			k := h.Key()
			if k == self || h.Withdrawn {
				continue
			}
			if _, ok := found[k]; !ok {
				found[k] = h.Resource
			}
			reasons[k] = append(reasons[k], core.ReasonName)
		}
	}

	out := core.Alternatives{
		Source: core.SourceFor(withCatalog(catalogs, r.Catalog)),
		Impact: impact, Unit: unit, Value: base,
		Alternatives: []core.Alternative{},
	}
	noValue := 0
	otherUnits := map[string]int{}
	var lower []core.Alternative
	for k, c := range found {
		v, ok := impact.Value(&c)
		if !ok {
			noValue++
			continue
		}
		f, ok := Factor(&c, unit)
		if !ok {
			otherUnits[Display(c.Unit)]++
			continue
		}
		out.Considered++
		val := round(v * f)
		if val >= base {
			continue
		}
		c.Localize(req.Lang)
		a := core.Alternative{Resource: c, Value: val, Saving: round(base - val), Reasons: reasons[k], Details: core.DetailsPath(k)}
		if base > 0 {
			// A derived share, not a published value: two decimals.
			p := math.Round(10000*(base-val)/base) / 100
			a.SavingPercent = &p
		}
		lower = append(lower, a)
	}
	sort.Slice(lower, func(i, j int) bool {
		si, sj := lower[i].Reasons[0] == core.ReasonSibling, lower[j].Reasons[0] == core.ReasonSibling
		if si != sj {
			return si
		}
		if lower[i].Value != lower[j].Value {
			return lower[i].Value < lower[j].Value
		}
		return lower[i].Key().String() < lower[j].Key().String()
	})
	out.Lower = len(lower)
	if len(lower) > limit {
		lower = lower[:limit]
	}
	out.Alternatives = append(out.Alternatives, lower...)
	r.Localize(req.Lang)
	out.Resource = r

	if out.Lower == 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("nothing lower: none of the %d comparable resources stated per %s has a lower %s than %s (%s per %s)",
			out.Considered, unit, impact.Field(), r.Ref(), formatValue(base), unit))
	}
	if len(otherUnits) > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("left out %d comparable resources that cannot be stated per %s: declared per %s",
			sum(otherUnits), unit, countList(otherUnits)))
	}
	if noValue > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("left out %d comparable resources that do not publish %s", noValue, impact.Field()))
	}
	return out, nil
}

// ownName is a resource's name in its catalog's own language.
func ownName(r *core.Resource) string {
	if r.Catalog == core.DKBR {
		return first(r.NameDA, r.NameEN, r.NameSV)
	}
	return first(r.NameSV, r.NameEN, r.NameDA)
}

func first(vs ...string) string {
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

// sameCategory compares the publisher's category codes when both have
// one, else the category names.
func sameCategory(a, b *core.Resource) bool {
	if a.Catalog != b.Catalog {
		return false // each publisher has its own categories
	}
	if a.CategoryCode != "" && b.CategoryCode != "" {
		return a.CategoryCode == b.CategoryCode
	}
	return a.Category != "" && strings.EqualFold(strings.TrimSpace(a.Category), strings.TrimSpace(b.Category))
}

// sibling tells whether b is a variant of the same product as a: the same
// name head (up to the first comma or bracket) and the same classes (the
// name's words holding digits, such as the strength class C30/37). So
// "Fabriksbetong, husbyggnad klimatförbättrad C30/37" is a sibling of
// "Fabriksbetong, husbyggnad C30/37" but C25/30 is not, and
// "Aluminiumprofiler, skrotbaserad" one of "Aluminiumprofiler, primär".
func sibling(a, b *core.Resource) bool {
	na, nb := ownName(a), ownName(b)
	ha, hb := nameHead(na), nameHead(nb)
	if ha == "" || ha != hb {
		return false
	}
	ca, cb := classes(na), classes(nb)
	if len(ca) != len(cb) {
		return false
	}
	for i := range ca {
		if ca[i] != cb[i] {
			return false
		}
	}
	return true
}

func nameHead(name string) string {
	if i := strings.IndexAny(name, ",("); i >= 0 {
		name = name[:i]
	}
	return strings.ToLower(strings.Join(strings.Fields(name), " "))
}

func classes(name string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(name, func(r rune) bool { return unicode.IsSpace(r) || r == ',' || r == '(' || r == ')' }) {
		if strings.ContainsFunc(w, unicode.IsDigit) {
			out = append(out, strings.ToLower(w))
		}
	}
	sort.Strings(out)
	return out
}

// bk04Class is the code of a BK04 classification ("01002 Readymade
// concrete" -> "01002").
func bk04Class(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

func withCatalog(cs []core.CatalogID, c core.CatalogID) []core.CatalogID {
	for _, x := range cs {
		if x == c {
			return cs
		}
	}
	return append(append([]core.CatalogID(nil), cs...), c)
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// countList renders unit counts as "m² (3), st (1)", most first.
func countList(m map[string]int) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if m[ks[i]] != m[ks[j]] {
			return m[ks[i]] > m[ks[j]]
		}
		return ks[i] < ks[j]
	})
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = fmt.Sprintf("%s (%d)", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func formatValue(v float64) string { return fmt.Sprintf("%g", v) }
