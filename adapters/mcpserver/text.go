package mcpserver

import (
	"fmt"
	"html"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/climatesearch/climatesearch/core"
)

// The text renderings are for clients that read only a tool result's text:
// short, with the values an answer needs and the attribution. The
// structured content carries every field.

const notAffiliated = "climatesearch is not affiliated with the publisher."

// fmtNum writes a value with the digits the publisher gave: the shortest
// decimal that reads back as the value, after rounding to 12 significant
// digits, which no published value has more of, so artefacts of arithmetic
// on binary floats (0.30000000000000004, 273.00000000000006) drop while
// every published digit stays. The structured content keeps the full value.
func fmtNum(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', publishedDigits, 64), 64)
	if err != nil {
		r = v
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// publishedDigits bounds the significant digits of a published value.
const publishedDigits = 12

// matchedBy says how retrieval found a hit.
func matchedBy(s core.MatchSource) string {
	switch s {
	case core.MatchBoth:
		return "matched by full text and vector similarity"
	case core.MatchVector:
		return "matched by vector similarity only"
	}
	return "matched by full text"
}

func catalogList(cs []core.CatalogID) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}

// label is "Name [catalog:id]".
func label(r *core.Resource) string {
	if r.Name == "" {
		return "[" + r.Ref() + "]"
	}
	return r.Name + " [" + r.Ref() + "]"
}

// perUnit is the GWP unit of a resource's values.
func perUnit(r *core.Resource) string {
	if r.GWPUnit != "" {
		return r.GWPUnit
	}
	if r.Unit != "" {
		return "kg CO2e/" + r.Unit
	}
	return "kg CO2e per declared unit"
}

// searchText renders a search answer: how many of how many matched, the
// filters and order asked for, each hit with its values and how it
// matched, the facet counts when asked, the notes and the source.
func searchText(resp core.SearchResponse, req core.SearchRequest) string {
	catalogs := req.Catalogs
	if len(catalogs) == 0 {
		catalogs = core.Catalogs
	}
	asked := fmt.Sprintf("lang %s; catalogs %s%s", resp.Lang, catalogList(catalogs), filterText(&req.Refine))
	var b strings.Builder
	switch {
	case len(resp.Results) == 0 && resp.Total > 0:
		fmt.Fprintf(&b, "%d %s match %q (%s), none at offset %d or later: call again with an offset below %d.\n",
			resp.Total, plural(resp.Total, "resource", "resources"), resp.Query, asked, req.Offset, resp.Total)
	case len(resp.Results) == 0:
		fewer := ""
		if req.Filtering() {
			fewer = ", or fewer filters"
		}
		fmt.Fprintf(&b, "No resources match %q (%s). Try other or fewer words, a synonym, or the other language (lang sv or en)%s.\n",
			resp.Query, asked, fewer)
	default:
		of := ""
		if resp.Total > len(resp.Results) || req.Offset > 0 {
			of = fmt.Sprintf(" of %d matching", resp.Total)
		}
		order := "best first"
		if req.Sort.IsSet() {
			dir := "lowest"
			if req.Sort.Desc {
				dir = "highest"
			}
			order = fmt.Sprintf("%s %s first (sort %s)", dir, valueName(req.Sort.Impact), req.Sort)
		}
		if req.Offset > 0 {
			order += fmt.Sprintf(", from number %d", req.Offset+1)
		}
		fmt.Fprintf(&b, "%d%s %s for %q (%s), %s:\n", len(resp.Results), of, plural(len(resp.Results), "resource", "resources"), resp.Query, asked, order)
		extra := extraImpacts(&req)
		for i := range resp.Results {
			h := &resp.Results[i]
			fmt.Fprintf(&b, "%d. %s", req.Offset+i+1, label(&h.Resource))
			if fb := fallbackName(&h.Resource, resp.Lang); fb != "" {
				fmt.Fprintf(&b, " (%s)", fb)
			}
			if h.A1A3 != nil {
				fmt.Fprintf(&b, ": A1-A3 typical %s %s", fmtNum(*h.A1A3), perUnit(&h.Resource))
				if h.A1A3Conservative != nil {
					fmt.Fprintf(&b, " (conservative %s)", fmtNum(*h.A1A3Conservative))
				}
			}
			for _, imp := range extra {
				if v, ok := imp.Value(&h.Resource); ok {
					fmt.Fprintf(&b, "; %s %s", valueName(imp), fmtNum(v))
				} else {
					fmt.Fprintf(&b, "; %s not published", valueName(imp))
				}
			}
			fmt.Fprintf(&b, "; %s", matchedBy(h.MatchSource))
			if words := markedWords(h.Highlight); len(words) > 0 {
				fmt.Fprintf(&b, " (marked: %s)", strings.Join(words, ", "))
			}
			if h.Origin != "" {
				fmt.Fprintf(&b, "; product sheet %s", h.Origin)
			}
			b.WriteByte('\n')
		}
	}
	b.WriteString(facetsText(resp.Facets, resp.Total))
	for _, n := range resp.Notes {
		fmt.Fprintf(&b, "Note: %s\n", n)
	}
	fmt.Fprintf(&b, "Source: %s\n", resp.Source)
	b.WriteString("Every value of each hit is in the structured content; get_resource_details returns one resource, compare_resources states two in one unit.")
	return b.String()
}

// filterText lists the filters asked for, "; category Betong; unit kg;
// a1a3 from 0.1 to 0.5", or nothing.
func filterText(f *core.Refine) string {
	var b strings.Builder
	if c := strings.TrimSpace(f.Category); c != "" {
		fmt.Fprintf(&b, "; category %s", c)
	}
	if u := strings.TrimSpace(f.Unit); u != "" {
		fmt.Fprintf(&b, "; unit %s", core.DisplayUnit(u))
	}
	for _, rg := range f.Ranges {
		switch {
		case rg.Min != nil && rg.Max != nil:
			fmt.Fprintf(&b, "; %s from %s to %s", rg.Impact.Field(), fmtNum(*rg.Min), fmtNum(*rg.Max))
		case rg.Min != nil:
			fmt.Fprintf(&b, "; %s at least %s", rg.Impact.Field(), fmtNum(*rg.Min))
		case rg.Max != nil:
			fmt.Fprintf(&b, "; %s at most %s", rg.Impact.Field(), fmtNum(*rg.Max))
		}
	}
	return b.String()
}

// extraImpacts are the values a hit line adds to the A1-A3 values it always
// shows: those the sort or a range is on (A4, A5.1).
func extraImpacts(req *core.SearchRequest) []core.Impact {
	var out []core.Impact
	add := func(i core.Impact) {
		if i == core.ImpactTypical || i == core.ImpactConservative || i == "" {
			return
		}
		for _, x := range out {
			if x == i {
				return
			}
		}
		out = append(out, i)
	}
	add(req.Sort.Impact)
	for _, rg := range req.Ranges {
		add(rg.Impact)
	}
	return out
}

// valueName names an impact value as the hit lines do.
func valueName(i core.Impact) string {
	switch i {
	case core.ImpactConservative:
		return "A1-A3 conservative"
	case core.ImpactA4:
		return "A4"
	case core.ImpactA51:
		return "A5.1"
	}
	return "A1-A3 typical"
}

// markedWords are the distinct words a highlight marked in the name and
// description, as written, in order.
func markedWords(h *core.Highlight) []string {
	if h == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, t := range []string{h.Name, h.Description} {
		for {
			i := strings.Index(t, "<mark>")
			if i < 0 {
				break
			}
			t = t[i+len("<mark>"):]
			j := strings.Index(t, "</mark>")
			if j < 0 {
				break
			}
			w := html.UnescapeString(t[:j])
			t = t[j+len("</mark>"):]
			if k := strings.ToLower(w); w != "" && !seen[k] {
				seen[k] = true
				out = append(out, w)
			}
		}
	}
	return out
}

// maxFacetValues bounds the values a facet line names; the structured
// content has them all.
const maxFacetValues = 10

// facetsText is one line per facet asked for: its values with their counts
// over the whole match set, most frequent first.
func facetsText(f core.Facets, total int) string {
	var b strings.Builder
	for _, name := range core.FacetFields {
		vals, ok := f[name]
		if !ok {
			continue
		}
		parts := make([]string, 0, min(len(vals), maxFacetValues))
		for _, v := range vals[:min(len(vals), maxFacetValues)] {
			parts = append(parts, fmt.Sprintf("%s %d", v.Value, v.Count))
		}
		more := ""
		if len(vals) > maxFacetValues {
			more = fmt.Sprintf(" and %d more", len(vals)-maxFacetValues)
		}
		if len(parts) == 0 {
			parts = append(parts, "none")
		}
		fmt.Fprintf(&b, "By %s over all %d %s: %s%s\n", name, total, plural(total, "match", "matches"), strings.Join(parts, ", "), more)
	}
	return b.String()
}

func detailsText(r *core.Resource, lang core.Lang) string {
	var b strings.Builder
	b.WriteString(label(r))
	if other := otherName(r); other != "" && other != r.Name {
		fmt.Fprintf(&b, " (%s)", other)
	}
	if r.NameDE != "" && r.NameDE != r.Name {
		fmt.Fprintf(&b, " (German: %s)", r.NameDE)
	}
	b.WriteByte('\n')
	if fb := fallbackName(r, lang); fb != "" {
		b.WriteString(upper(fb) + ": no " + langName(string(lang)) + " name is published.\n")
	}
	if r.Withdrawn {
		b.WriteString("Withdrawn: no longer in the publisher's latest release.\n")
	}
	var facts []string
	cat := first(r.Category, r.CategoryEN)
	if lang == core.English {
		cat = first(r.CategoryEN, r.Category)
	}
	if c := cat; c != "" {
		facts = append(facts, "category "+c)
	}
	if r.Unit != "" {
		facts = append(facts, "declared unit "+r.Unit)
	}
	if r.Version != "" {
		facts = append(facts, "release "+r.Version)
	}
	if len(facts) > 0 {
		b.WriteString(upper(strings.Join(facts, "; ")) + "\n")
	}
	var vals []string
	for _, v := range []struct {
		name string
		p    *float64
	}{{"A1-A3 typical", r.A1A3}, {"A1-A3 conservative", r.A1A3Conservative}, {"A4", r.A4}, {"A5.1", r.A51}} {
		if v.p != nil {
			vals = append(vals, v.name+" "+fmtNum(*v.p))
		}
	}
	if len(vals) > 0 {
		fmt.Fprintf(&b, "%s (%s)\n", strings.Join(vals, "; "), perUnit(r))
	}
	if len(r.Conversions) > 0 {
		keys := make([]string, 0, len(r.Conversions))
		for k := range r.Conversions {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for i, k := range keys {
			keys[i] = k + " " + fmtNum(r.Conversions[k])
		}
		fmt.Fprintf(&b, "Conversions: %s\n", strings.Join(keys, ", "))
	}
	if r.Description != "" {
		fmt.Fprintf(&b, "Description: %s\n", clip(r.Description, 300))
	}
	if r.Origin != "" {
		fmt.Fprintf(&b, "Product sheet: %s\n", r.Origin)
	}
	fmt.Fprintf(&b, "Source: %s. %s", strings.TrimSuffix(r.Source, "."), notAffiliated)
	return b.String()
}

func compareText(c *core.Comparison) string {
	var b strings.Builder
	if c.Incomparable {
		fmt.Fprintf(&b, "a %s (declared per %s) and b %s (declared per %s) share no unit: they are incomparable as they stand. "+
			"Call compare_resources again with a unit both can be restated in (see each resource's conversions), or compare other resources.\n",
			label(&c.A), orDash(c.A.Unit), label(&c.B), orDash(c.B.Unit))
		fmt.Fprintf(&b, "Source: %s", c.Source)
		return b.String()
	}
	per := "kg CO2e per " + c.Unit
	fmt.Fprintf(&b, "%s per %s:\n", impactName(c.Impact), c.Unit)
	fmt.Fprintf(&b, "a %s: %s %s\n", label(&c.A), fmtNum(c.ValueA), per)
	fmt.Fprintf(&b, "b %s: %s %s\n", label(&c.B), fmtNum(c.ValueB), per)
	fmt.Fprintf(&b, "a - b = %s %s; ", fmtNum(c.DeltaA1A3), per)
	switch {
	case c.ValueA < c.ValueB:
		fmt.Fprintf(&b, "a (%s) has the lower impact.\n", c.A.Ref())
	case c.ValueB < c.ValueA:
		fmt.Fprintf(&b, "b (%s) has the lower impact.\n", c.B.Ref())
	default:
		b.WriteString("equal impact.\n")
	}
	fmt.Fprintf(&b, "Source: %s", c.Source)
	return b.String()
}

func impactName(i core.Impact) string {
	switch i {
	case core.ImpactConservative:
		return "Conservative A1-A3 (GWP-GHG)"
	case core.ImpactA4:
		return "A4 transport to site (GWP-GHG)"
	case core.ImpactA51:
		return "A5.1 construction-site waste (GWP-GHG)"
	}
	return "Typical A1-A3 (GWP-GHG)"
}

// fallbackName says in which language the name shown is when it is not the
// language asked for ("name in Danish"), or is empty.
func fallbackName(r *core.Resource, lang core.Lang) string {
	if r.NameLang == "" || r.NameLang == string(lang) {
		return ""
	}
	return "name in " + langName(r.NameLang)
}

func langName(l string) string {
	switch l {
	case "sv":
		return "Swedish"
	case "en":
		return "English"
	case "da":
		return "Danish"
	case "de":
		return "German"
	}
	return l
}

// otherName is the name in the language not shown first.
func otherName(r *core.Resource) string {
	if r.Name == r.NameSV {
		return first(r.NameEN, r.NameDA)
	}
	return first(r.NameSV, r.NameDA)
}

func first(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func upper(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return strings.ToUpper(string(r)) + s[n:]
}

// clip shortens s to at most n characters at a word boundary.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	rs := []rune(s)[:n]
	out := string(rs)
	if i := strings.LastIndexByte(out, ' '); i > n/2 {
		out = out[:i]
	}
	return out + "…"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
