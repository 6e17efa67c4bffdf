// Package compare states two resources in one unit so their climate impact
// can be compared. It never returns a silently wrong number: either both
// sides are restated in the same unit through declared conversions, or the
// answer says it is incomparable (or, for an explicit unit, refuses).
package compare

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/climatesearch/climatesearch/core"
)

// Resolver finds a resource by reference (lookup.Service does).
type Resolver interface {
	Resolve(ctx context.Context, ref string) (core.Resource, error)
}

// Service implements ports.Comparer and ports.Alternatives.
type Service struct {
	resolver Resolver
	catalog  Catalog // candidates of Alternatives
	finder   Finder
}

// New returns a compare service; catalog and finder serve Alternatives
// and may be nil when only Compare is used.
func New(r Resolver, catalog Catalog, finder Finder) *Service {
	return &Service{resolver: r, catalog: catalog, finder: finder}
}

// Compare restates a and b in one unit and reports the difference.
func (s *Service) Compare(ctx context.Context, req core.CompareRequest) (core.Comparison, error) {
	if strings.TrimSpace(req.A) == "" || strings.TrimSpace(req.B) == "" {
		return core.Comparison{}, core.Invalidf("both a and b are required: resource ids such as national:6000000000")
	}
	impact := req.Impact
	if impact == "" {
		impact = core.ImpactTypical
	}
	a, err := s.resolver.Resolve(ctx, req.A)
	if err != nil {
		return core.Comparison{}, side("a", err)
	}
	b, err := s.resolver.Resolve(ctx, req.B)
	if err != nil {
		return core.Comparison{}, side("b", err)
	}
	va, okA := impact.Value(&a)
	vb, okB := impact.Value(&b)
	switch {
	case !okA && !okB:
		return core.Comparison{}, core.Invalidf("neither a (%s) nor b (%s) publishes %s (impact %s)", a.Ref(), b.Ref(), impact.Field(), impact)
	case !okA:
		return core.Comparison{}, core.Invalidf("a (%s) does not publish %s (impact %s); choose another impact", a.Ref(), impact.Field(), impact)
	case !okB:
		return core.Comparison{}, core.Invalidf("b (%s) does not publish %s (impact %s); choose another impact", b.Ref(), impact.Field(), impact)
	}
	a.Localize(req.Lang)
	b.Localize(req.Lang)
	out := core.Comparison{Source: core.SourceFor(uniq(a.Catalog, b.Catalog)), A: a, B: b, Impact: impact}

	unit := strings.TrimSpace(req.Unit)
	if unit != "" {
		fa, okA := Factor(&a, unit)
		fb, okB := Factor(&b, unit)
		switch {
		case !okA && !okB:
			return core.Comparison{}, core.Invalidf("unit %q cannot apply to a (%s) nor to b (%s)", unit, describe(&a), describe(&b))
		case !okA:
			return core.Comparison{}, core.Invalidf("unit %q cannot apply to a (%s)", unit, describe(&a))
		case !okB:
			return core.Comparison{}, core.Invalidf("unit %q cannot apply to b (%s)", unit, describe(&b))
		}
		return finish(out, Display(unit), va*fa, vb*fb), nil
	}
	u, ok := sharedUnit(&a, &b)
	if !ok {
		out.Incomparable = true
		return out, nil
	}
	fa, _ := Factor(&a, u)
	fb, _ := Factor(&b, u)
	return finish(out, Display(u), va*fa, vb*fb), nil
}

// side names which argument a lookup failure is about.
func side(name string, err error) error {
	var ce *core.Error
	if errors.As(err, &ce) {
		c := *ce
		c.Msg = name + ": " + ce.Error()
		c.Err = nil // already in the message
		return &c
	}
	return fmt.Errorf("%s: %w", name, err)
}

func uniq(a, b core.CatalogID) []core.CatalogID {
	if a == b {
		return []core.CatalogID{a}
	}
	return []core.CatalogID{a, b}
}

func finish(c core.Comparison, unit string, va, vb float64) core.Comparison {
	c.Unit = unit
	c.ValueA, c.ValueB = round(va), round(vb)
	// The delta is taken from the rounded values: rounding va - vb to 12
	// significant digits of itself keeps a multiplication's artefact
	// (253.79999999999998 - 253.8 = -2.8e-14) as if it were a difference.
	c.DeltaA1A3 = round(c.ValueA - c.ValueB)
	switch {
	case c.ValueA < c.ValueB:
		c.LowerImpactID = c.A.ID
	case c.ValueB < c.ValueA:
		c.LowerImpactID = c.B.ID
	}
	return c
}

// round drops float artefacts (273.00000000000006) beyond 12 significant digits.
func round(v float64) float64 {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	return r
}

func describe(r *core.Resource) string {
	units := Units(r)
	return fmt.Sprintf("%s declared per %s; restatable in %s", r.Ref(), Display(r.Unit), strings.Join(units, ", "))
}

// canon makes unit spellings comparable: m3 = m³, m2 = m², case ignored.
func canon(u string) string { return core.CanonUnit(u) }

// Display is the preferred spelling of a unit (superscripts for m² and m³).
func Display(u string) string { return core.DisplayUnit(u) }

// Factor returns f such that value-per-unit = value-per-declared-unit × f.
// It applies when unit is the declared unit, when a conversion
// `<declared>/<unit>` exists, or its inverse `<unit>/<declared>`. A
// conversion whose numerator and denominator are both foreign to the
// declared unit (the publisher's fuel rows labelled kg/m²) never applies.
func Factor(r *core.Resource, unit string) (float64, bool) {
	decl, want := canon(r.Unit), canon(unit)
	if want == "" || decl == "" {
		return 0, false
	}
	if want == decl {
		return 1, true
	}
	for _, k := range sortedKeys(r.Conversions) {
		v := r.Conversions[k]
		num, den, ok := strings.Cut(k, "/")
		if !ok || v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			continue
		}
		num, den = canon(num), canon(den)
		if num == decl && den == want {
			return v, true
		}
		if num == want && den == decl {
			return 1 / v, true
		}
	}
	return 0, false
}

// Units lists the units a resource can be stated in, as displayed: its
// declared unit first, then those its conversions reach.
func Units(r *core.Resource) []string {
	decl := canon(r.Unit)
	if decl == "" {
		return nil
	}
	out := []string{Display(r.Unit)}
	seen := map[string]bool{decl: true}
	for _, k := range sortedKeys(r.Conversions) {
		num, den, ok := strings.Cut(k, "/")
		if !ok {
			continue
		}
		var u string
		switch {
		case canon(num) == decl:
			u = den
		case canon(den) == decl:
			u = num
		default:
			continue
		}
		if _, ok := Factor(r, u); ok && !seen[canon(u)] {
			seen[canon(u)] = true
			out = append(out, Display(u))
		}
	}
	return out
}

// sharedUnit picks the unit to compare in when none was asked: a's declared
// unit if b can be stated in it, else b's declared unit, else the first
// common unit in alphabetical order.
func sharedUnit(a, b *core.Resource) (string, bool) {
	ua, ub := Units(a), Units(b)
	inA, inB := set(ua), set(ub)
	if len(ua) > 0 && inB[canon(ua[0])] {
		return ua[0], true
	}
	if len(ub) > 0 && inA[canon(ub[0])] {
		return ub[0], true
	}
	var common []string
	for _, u := range ua {
		if inB[canon(u)] {
			common = append(common, u)
		}
	}
	if len(common) == 0 {
		return "", false
	}
	sort.Strings(common)
	return common[0], true
}

func set(units []string) map[string]bool {
	m := make(map[string]bool, len(units))
	for _, u := range units {
		m[canon(u)] = true
	}
	return m
}

func sortedKeys(m map[string]float64) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
