package e2e

import (
	"html"
	"strings"
	"testing"

	"github.com/climatesearch/climatesearch/core"
)

// Refinements of search and listing over the real national catalog: facets
// and totals over the whole match set, sort within one declared unit, the
// impact ranges, unknown filters, highlight, and the relevance floor.

// allHits pages through a search until its total is read.
func allHits(t *testing.T, e *env, query string) []core.Hit {
	t.Helper()
	var out []core.Hit
	for off := 0; ; off += 100 {
		r := doSearch(t, e, query+"&limit=100&offset="+itoa(off))
		out = append(out, r.Results...)
		if len(r.Results) < 100 || off+100 > core.MaxOffset {
			if len(out) != r.Total && off+100 <= core.MaxOffset {
				t.Fatalf("%s: paged through %d hits, total says %d", query, len(out), r.Total)
			}
			return out
		}
	}
}

func itoa(n int) string { return fmtInt(n) }

func fmtInt(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func facetMap(vs []core.FacetValue) map[string]int {
	m := map[string]int{}
	for _, v := range vs {
		m[v.Value] = v.Count
	}
	return m
}

func TestFacetsAndTotalCoverTheWholeMatchSet(t *testing.T) {
	e := newEnv(t, nil)
	e.mustIngest()
	for _, vector := range []string{"false", "true"} {
		base := "q=betong&vector=" + vector
		page := doSearch(t, e, base+"&limit=5&facets=category,unit,catalog")
		if len(page.Results) != 5 || page.Total <= 5 {
			t.Fatalf("vector=%s: %d results, total %d: want a page of 5 out of more", vector, len(page.Results), page.Total)
		}
		if page.TookMs <= 0 {
			t.Errorf("vector=%s: took_ms %v", vector, page.TookMs)
		}
		all := allHits(t, e, base)
		if len(all) != page.Total {
			t.Fatalf("vector=%s: total %d, but %d hits in all pages", vector, page.Total, len(all))
		}
		cats, units, catalogs := map[string]int{}, map[string]int{}, map[string]int{}
		for _, h := range all {
			cats[h.Category]++
			units[core.DisplayUnit(h.Unit)]++
			catalogs[string(h.Catalog)]++
		}
		for name, want := range map[string]map[string]int{"category": cats, "unit": units, "catalog": catalogs} {
			got := facetMap(page.Facets[name])
			if len(got) != len(want) {
				t.Errorf("vector=%s facet %s: %v, counted %v", vector, name, got, want)
			}
			for v, n := range want {
				if got[v] != n {
					t.Errorf("vector=%s facet %s[%s] = %d, counted %d over all pages", vector, name, v, got[v], n)
				}
			}
		}
	}
	// Without facets or filters, the total is the index's count.
	plain := doSearch(t, e, "q=betong&limit=3")
	if len(allHits(t, e, "q=betong")) != plain.Total {
		t.Fatalf("plain total %d", plain.Total)
	}
	// The listing: total and facets over every live resource.
	var l core.ListResponse
	e.get("/api/resources?databases=national&facets=unit,category").json(t, &l)
	if l.Total != len(l.Resources) || l.Total < 200 {
		t.Fatalf("listing total %d, %d resources", l.Total, len(l.Resources))
	}
	sum := 0
	for _, v := range l.Facets["unit"] {
		sum += v.Count
	}
	if sum != l.Total {
		t.Fatalf("unit facet sums to %d, total %d", sum, l.Total)
	}
}

func TestSortWithinOneUnitAndRanges(t *testing.T) {
	e := newEnv(t, nil)
	e.mustIngest()
	// el matches energy carriers declared per MJ and kWh and products per
	// kg: a sort is refused naming them with their counts.
	units := facetMap(doSearch(t, e, "q=el&facets=unit").Facets["unit"])
	if len(units) < 2 {
		t.Fatalf("el: units %v, want several", units)
	}
	r := e.get("/api/search?q=el&sort=a1a3")
	if r.Status != 400 {
		t.Fatalf("mixed-unit sort: %d %s", r.Status, r.Body)
	}
	msg := r.errMsg(t)
	for u, n := range units {
		if !contains(msg, u+" ("+fmtInt(n)+")") {
			t.Errorf("mixed-unit sort message %q does not name %s (%d)", msg, u, n)
		}
	}
	if r := e.get("/api/resources?databases=national&sort=-a1a3"); r.Status != 400 || !contains(r.errMsg(t), "units") {
		t.Fatalf("mixed-unit listing sort: %d %s", r.Status, r.Body)
	}
	// Within one unit: ascending and descending, the whole match set ordered.
	units = facetMap(doSearch(t, e, "q=betong&facets=unit").Facets["unit"])
	unit := "kg"
	if units[unit] < 20 {
		t.Fatalf("betong: units %v, want at least 20 per kg", units)
	}
	if r := e.get("/api/search?q=betong&unit=kg&sort=a1a3"); r.Status != 200 {
		t.Fatalf("sort within one unit: %d %s", r.Status, r.Body)
	}
	for _, desc := range []bool{false, true} {
		sort := "a1a3"
		if desc {
			sort = "-a1a3"
		}
		hits := allHits(t, e, "q=betong&unit="+q(unit)+"&sort="+sort)
		if len(hits) != units[unit] {
			t.Fatalf("sort=%s unit=%s: %d hits, facet says %d", sort, unit, len(hits), units[unit])
		}
		missing := false
		for i, h := range hits {
			if h.A1A3 == nil {
				missing = true
				continue
			}
			if missing {
				t.Fatalf("sort=%s: %s has a value after a resource without one", sort, h.ID)
			}
			if i > 0 && hits[i-1].A1A3 != nil && (desc && *h.A1A3 > *hits[i-1].A1A3 || !desc && *h.A1A3 < *hits[i-1].A1A3) {
				t.Fatalf("sort=%s: %v then %v", sort, *hits[i-1].A1A3, *h.A1A3)
			}
		}
	}
	// Ranges on the listing: exactly the resources within the bounds.
	var all, in core.ListResponse
	e.get("/api/resources?databases=national&unit=kg").json(t, &all)
	e.get("/api/resources?databases=national&unit=kg&a1a3_min=1&a1a3_max=5&sort=a1a3").json(t, &in)
	want := 0
	for _, res := range all.Resources {
		if res.A1A3 != nil && *res.A1A3 >= 1 && *res.A1A3 <= 5 {
			want++
		}
	}
	if want == 0 || in.Total != want || len(in.Resources) != want {
		t.Fatalf("a1a3 in [1, 5] per kg: %d listed, total %d, counted %d", len(in.Resources), in.Total, want)
	}
	for i, res := range in.Resources {
		if *res.A1A3 < 1 || *res.A1A3 > 5 || (i > 0 && *res.A1A3 < *in.Resources[i-1].A1A3) {
			t.Fatalf("range or order broken at %s: %v", res.ID, *res.A1A3)
		}
	}
	// Ranges on search.
	for _, h := range allHits(t, e, "q=betong&a1a3_max=300") {
		if h.A1A3 == nil || *h.A1A3 > 300 {
			t.Fatalf("a1a3_max=300 kept %s (%v)", h.ID, h.A1A3)
		}
	}
	for _, bad := range []string{"a1a3_min=abc", "a1a3_min=5&a1a3_max=1", "sort=price", "facets=colour"} {
		if r := e.get("/api/search?q=betong&" + bad); r.Status != 400 {
			t.Errorf("%s: %d", bad, r.Status)
		}
	}
}

func TestUnknownFiltersNameCloseValues(t *testing.T) {
	e := newEnv(t, nil)
	e.mustIngest()
	for _, tc := range []struct{ path, want string }{
		{"/api/search?q=skiva&category=Isolerng", `"Isolering"`},
		{"/api/search?q=skiva&category=insulaton", `"Insulation"`},
		{"/api/resources?category=isolerin", `"Isolering"`},
		{"/api/search?q=skiva&unit=m4", `"m²"`},
		{"/api/resources?unit=kgg", `"kg"`},
	} {
		r := e.get(tc.path)
		if r.Status != 400 || !contains(r.errMsg(t), tc.want) {
			t.Errorf("%s: %d %s, want 400 naming %s", tc.path, r.Status, r.Body, tc.want)
		}
	}
	// A valid category that the query does not reach is an empty answer.
	r := doSearch(t, e, "q=kopparrör&category=Isolering")
	if r.Total != 0 || len(r.Results) != 0 {
		t.Fatalf("valid category, no match: %+v", r)
	}
	// Case and m2/m² spellings still filter as before.
	if doSearch(t, e, "q=skiva&category=isolering").Total == 0 || doSearch(t, e, "q=solcell&unit=m2").Total == 0 {
		t.Fatal("case-insensitive category or m2 unit filter found nothing")
	}
}

func TestHighlightMarksMatchedWords(t *testing.T) {
	e := newEnv(t, nil)
	e.mustIngest()
	r := doSearch(t, e, "q=spånskiva&highlight=true&limit=3")
	h := r.Results[0]
	if h.Highlight == nil || h.Highlight.Name != "<mark>Spånskiva</mark>" || h.Name != "Spånskiva" {
		t.Fatalf("spånskiva: name %q, highlight %+v", h.Name, h.Highlight)
	}
	// Compound parts and stems: glasull also marks the ull of lösull;
	// wool marks Glass<mark>wool</mark>.
	r = doSearch(t, e, "q=glasull&highlight=true&limit=10")
	if !strings.Contains(r.Results[0].Highlight.Name+r.Results[1].Highlight.Name+r.Results[2].Highlight.Name, "<mark>Glasull</mark>") {
		t.Fatalf("glasull: %+v", r.Results[0].Highlight)
	}
	for _, qq := range []string{"glasull&lang=sv", "mineral wool&lang=en", "betong C30/37&lang=sv"} {
		qq, lang, _ := strings.Cut(qq, "&")
		r := doSearch(t, e, "q="+q(qq)+"&highlight=true&"+lang+"&limit=5")
		marked := 0
		for _, h := range r.Results {
			if h.Highlight == nil {
				t.Fatalf("%s: no highlight", qq)
			}
			for _, pair := range [][2]string{{h.Highlight.Name, h.Name}, {h.Highlight.Description, h.Description}} {
				plain := html.UnescapeString(strings.NewReplacer("<mark>", "", "</mark>", "").Replace(pair[0]))
				if plain != pair[1] {
					t.Fatalf("%s: highlight %q is not the text %q", qq, pair[0], pair[1])
				}
				marked += strings.Count(pair[0], "<mark>")
			}
		}
		if marked == 0 {
			t.Errorf("%s: nothing marked", qq)
		}
	}
	if doSearch(t, e, "q=spånskiva&limit=1").Results[0].Highlight != nil {
		t.Fatal("highlight without highlight=true")
	}
}

func TestRelevanceFloorDropsNonsense(t *testing.T) {
	e := newEnv(t, nil)
	e.mustIngest()
	for _, nq := range []string{"zzzzqqq", "asdf qwerty", "xyzzy", "qqqq wwww", "lorem ipsum", "asdfghjkl"} {
		for _, vector := range []string{"true", "false"} {
			r := doSearch(t, e, "q="+q(nq)+"&vector="+vector)
			if len(r.Results) != 0 || r.Total != 0 {
				t.Errorf("%q vector=%s: %d results (total %d), want none", nq, vector, len(r.Results), r.Total)
			}
			if !contains(strings.Join(r.Notes, " "), "nothing matched") {
				t.Errorf("%q vector=%s: notes %q do not say nothing matched", nq, vector, r.Notes)
			}
		}
	}
	// Real queries keep their vector-found hits' company: the floor drops
	// only hits found by vectors alone.
	r := doSearch(t, e, "q=glasull&vector=true&explain=true&limit=50")
	for _, h := range r.Results {
		if h.MatchSource == core.MatchVector && h.Explain.VectorScore < 0.30 {
			t.Fatalf("vector-only hit %s below the floor (%v)", h.ID, h.Explain.VectorScore)
		}
	}
	if len(r.Results) == 0 || r.Results[0].MatchSource != core.MatchBoth {
		t.Fatalf("glasull hybrid: %+v", r.Results)
	}
}
