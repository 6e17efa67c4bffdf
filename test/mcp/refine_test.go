package mcpe2e

import (
	"encoding/json"
	"html"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/climatesearch/climatesearch/core"
)

// refinedSearch is one search_climate_data call with REST's parameters for
// the same question (besides q, lang, databases, limit, vector and rerank,
// which restPath adds).
type refinedSearch struct {
	name  string
	args  map[string]any
	rest  string // the refinements as REST query parameters
	check func(t *testing.T, sr core.SearchResponse)
}

// restPath is the REST search asking what args ask, with vector retrieval
// (MCP always uses vectors) and rerank exactly when the process has a
// reranker (MCP then always reranks).
func restPath(args map[string]any, refine string, rerank bool) string {
	v := url.Values{}
	v.Set("q", args["query"].(string))
	if l, ok := args["lang"].(string); ok {
		v.Set("lang", l)
	}
	if dbs, ok := args["databases"].([]string); ok {
		v.Set("databases", strings.Join(dbs, ","))
	}
	if n, ok := args["limit"].(int); ok {
		v.Set("limit", strconv.Itoa(n))
	}
	v.Set("vector", "true")
	v.Set("rerank", strconv.FormatBool(rerank))
	p := "/api/search?" + v.Encode()
	if refine != "" {
		p += "&" + refine
	}
	return p
}

func refinedSearches() []refinedSearch {
	units := func(want string) func(t *testing.T, sr core.SearchResponse) {
		return func(t *testing.T, sr core.SearchResponse) {
			for _, h := range sr.Results {
				if core.CanonUnit(h.Unit) != core.CanonUnit(want) {
					t.Errorf("unit=%s kept %s declared per %s", want, h.Ref(), h.Unit)
				}
			}
		}
	}
	sorted := func(desc bool) func(t *testing.T, sr core.SearchResponse) {
		return func(t *testing.T, sr core.SearchResponse) {
			units("kg")(t, sr)
			for i := 1; i < len(sr.Results); i++ {
				a, b := sr.Results[i-1].A1A3, sr.Results[i].A1A3
				if a == nil || b == nil || (desc && *b > *a) || (!desc && *b < *a) {
					t.Fatalf("not sorted at %d: %v then %v", i, a, b)
				}
			}
		}
	}
	return []refinedSearch{
		{"category in Swedish", map[string]any{"query": "skiva", "databases": []string{"national"}, "category": "Isolering"}, "category=Isolering",
			func(t *testing.T, sr core.SearchResponse) {
				if len(sr.Results) == 0 {
					t.Fatal("no insulation boards")
				}
				for _, h := range sr.Results {
					if h.Category != "Isolering" {
						t.Errorf("category filter kept %s of %q", h.Ref(), h.Category)
					}
				}
			}},
		{"category in English, any case", map[string]any{"query": "insulation", "lang": "en", "category": "insulation", "limit": 5}, "category=insulation", nil},
		{"unit m2 spelt m2", map[string]any{"query": "solcell", "unit": "m2"}, "unit=m2", units("m²")},
		{"sort a1a3 within kg", map[string]any{"query": "betong", "databases": []string{"national"}, "unit": "kg", "sort": "a1a3", "limit": 20}, "unit=kg&sort=a1a3", sorted(false)},
		{"sort -a1a3, second page", map[string]any{"query": "betong", "unit": "kg", "sort": "-a1a3", "offset": 5, "limit": 5}, "unit=kg&sort=-a1a3&offset=5", sorted(true)},
		{"sort a5_1 within kg", map[string]any{"query": "betong", "unit": "kg", "sort": "a5_1"}, "unit=kg&sort=a5_1", units("kg")},
		{"offset", map[string]any{"query": "betong", "offset": 10, "limit": 10}, "offset=10",
			func(t *testing.T, sr core.SearchResponse) {
				if sr.Total <= 10 || len(sr.Results) == 0 {
					t.Fatalf("offset 10 of %d: %d hits", sr.Total, len(sr.Results))
				}
			}},
		{"offset past the end", map[string]any{"query": "spånskiva", "offset": 1000}, "offset=1000",
			func(t *testing.T, sr core.SearchResponse) {
				if sr.Total == 0 || len(sr.Results) != 0 {
					t.Fatalf("offset 1000 of %d: %d hits", sr.Total, len(sr.Results))
				}
			}},
		{"ranges", map[string]any{"query": "betong", "unit": "kg", "a1a3_min": 0.05, "a1a3_max": 0.2, "a4_max": 0.05}, "unit=kg&a1a3_min=0.05&a1a3_max=0.2&a4_max=0.05",
			func(t *testing.T, sr core.SearchResponse) {
				if len(sr.Results) == 0 {
					t.Fatal("nothing in range")
				}
				for _, h := range sr.Results {
					if h.A1A3 == nil || *h.A1A3 < 0.05 || *h.A1A3 > 0.2 || h.A4 == nil || *h.A4 > 0.05 {
						t.Errorf("out of range: %s a1a3 %v a4 %v", h.Ref(), h.A1A3, h.A4)
					}
				}
			}},
		{"conservative range as text", map[string]any{"query": "isolering", "a1a3_conservative_max": "2"}, "a1a3_conservative_max=2", nil},
		{"facets", map[string]any{"query": "skiva", "facets": []string{"category", "unit", "catalog"}, "limit": 3}, "facets=category,unit,catalog",
			func(t *testing.T, sr core.SearchResponse) {
				sum := 0
				for _, v := range sr.Facets["unit"] {
					sum += v.Count
				}
				if len(sr.Facets) != 3 || len(sr.Facets["category"]) < 2 || sum != sr.Total || sr.Total <= 3 {
					t.Fatalf("facets %v over total %d", sr.Facets, sr.Total)
				}
			}},
		{"highlight", map[string]any{"query": "spånskiva", "highlight": true, "limit": 10}, "highlight=true",
			func(t *testing.T, sr core.SearchResponse) {
				marked := 0
				for _, h := range sr.Results {
					if h.Highlight == nil {
						t.Fatalf("%s without highlight", h.Ref())
					}
					plain := html.UnescapeString(strings.NewReplacer("<mark>", "", "</mark>", "").Replace(h.Highlight.Name))
					if plain != h.Name {
						t.Errorf("%s: highlight %q is not the name %q", h.Ref(), h.Highlight.Name, h.Name)
					}
					marked += strings.Count(h.Highlight.Name+h.Highlight.Description, "<mark>")
					if h.ID == "6000000000" && h.Highlight.Name != "<mark>Spånskiva</mark>" {
						t.Errorf("Spånskiva marked as %q", h.Highlight.Name)
					}
				}
				if marked == 0 {
					t.Error("nothing marked")
				}
			}},
		{"highlight in English", map[string]any{"query": "mineral wool", "lang": "en", "highlight": true, "limit": 5}, "highlight=true", nil},
		{"Danish text, dkbr facets", map[string]any{"query": "beton", "databases": []string{"dkbr"}, "facets": []string{"unit"}}, "facets=unit",
			func(t *testing.T, sr core.SearchResponse) {
				if len(sr.Results) == 0 || sr.Results[0].ID != "#G0164" || sr.Facets["unit"][0].Value != "m³" {
					t.Fatalf("beton in dkbr: %+v", sr)
				}
			}},
		{"everything at once", map[string]any{"query": "betong", "lang": "en", "databases": []string{"national"}, "category": "Betong", "unit": "kg", "sort": "-a1a3_conservative",
			"a1a3_max": 1, "facets": []string{"catalog"}, "highlight": true, "offset": 2, "limit": 4}, "category=Betong&unit=kg&sort=-a1a3_conservative&a1a3_max=1&facets=catalog&highlight=true&offset=2", nil},
	}
}

// TestRefinedSearchesEqualREST: searches using category, unit, offset,
// sort, ranges, facets and highlight answer over MCP exactly what REST
// answers (structuredContent = the REST body, total and facets included),
// over every transport, without and with a reranker; the structured
// content matches the output schema, and the text says what was asked.
func TestRefinedSearchesEqualREST(t *testing.T) {
	for _, rr := range []bool{false, true} {
		t.Run("rerank="+strconv.FormatBool(rr), func(t *testing.T) {
			settings := map[string]string{}
			if rr {
				settings["SERVICE_RERANKER"] = "http"
				settings["SERVICE_RERANKER_URL"] = rerankStub(t).URL
			}
			e := newEnv(t, settings)
			for _, kind := range transports {
				t.Run(kind, func(t *testing.T) {
					c := e.connect(t, kind)
					schema := outputSchemas(t, c.tools(t))["search_climate_data"]
					for _, tc := range refinedSearches() {
						var text string
						got := e.equalsREST(t, tc.name, restPath(tc.args, tc.rest, rr), func() []byte {
							r := c.call(t, "search_climate_data", tc.args)
							text = resultText(r)
							return structured(t, r)
						})
						conforms(t, schema, "search_climate_data", got)
						var sr core.SearchResponse
						if err := json.Unmarshal(got, &sr); err != nil {
							t.Fatal(err)
						}
						if tc.check != nil {
							t.Run(tc.name, func(t *testing.T) { tc.check(t, sr) })
						}
						if len(sr.Results) > 0 && sr.Total > len(sr.Results) && !strings.Contains(text, strconv.Itoa(len(sr.Results))+" of "+strconv.Itoa(sr.Total)+" matching") {
							t.Errorf("%s: the text does not say how many of the total it shows:\n%s", tc.name, text)
						}
						for name := range sr.Facets {
							if !strings.Contains(text, "By "+name+" over all "+strconv.Itoa(sr.Total)) {
								t.Errorf("%s: the text lacks the %s facet:\n%s", tc.name, name, text)
							}
						}
						if rr && sr.Results != nil && tc.args["sort"] != nil && !strings.Contains(strings.Join(sr.Notes, " "), "rerank is not applied with sort") {
							t.Errorf("%s: sorted with a reranker, notes %v", tc.name, sr.Notes)
						}
					}
				})
			}
		})
	}
}

// TestRefinementErrorsCarryRESTsMessage: what REST refuses with 400 is a
// tool error carrying REST's message, and what to do next; a sort over
// several declared units names them with their counts.
func TestRefinementErrorsCarryRESTsMessage(t *testing.T) {
	e := newEnv(t, nil)
	cases := []struct {
		args map[string]any
		rest string
		next string
	}{
		{map[string]any{"query": "el", "sort": "a1a3"}, "q=el&sort=a1a3", "Call again with unit set to one of the units named above"},
		{map[string]any{"query": "betong", "sort": "-a4", "databases": []string{"national", "dkbr"}}, "q=betong&sort=-a4&databases=national,dkbr", "Call again with unit set to one of the units named above"},
		{map[string]any{"query": "skiva", "category": "Isolerng"}, "q=skiva&category=Isolerng", "Call again with one of the values named above"},
		{map[string]any{"query": "skiva", "unit": "m4"}, "q=skiva&unit=m4", "Call again with one of the values named above"},
		{map[string]any{"query": "betong", "sort": "price"}, "q=betong&sort=price", "call again"},
		{map[string]any{"query": "betong", "facets": []string{"colour"}}, "q=betong&facets=colour", "call again"},
		{map[string]any{"query": "betong", "a1a3_min": "abc"}, "q=betong&a1a3_min=abc", "call again"},
		{map[string]any{"query": "betong", "a1a3_min": 5, "a1a3_max": 1}, "q=betong&a1a3_min=5&a1a3_max=1", "call again"},
		{map[string]any{"query": "betong", "offset": 1001}, "q=betong&offset=1001", "call again"},
	}
	for _, kind := range transports {
		t.Run(kind, func(t *testing.T) {
			c := e.connect(t, kind)
			for _, tc := range cases {
				code, body := e.rest("/api/search?vector=true&" + tc.rest)
				var rest struct {
					Error string `json:"error"`
				}
				if code != 400 || json.Unmarshal(body, &rest) != nil || rest.Error == "" {
					t.Fatalf("REST %s: %d %s, want 400", tc.rest, code, body)
				}
				r := c.call(t, "search_climate_data", tc.args)
				tx := resultText(r)
				if !r.IsError || r.StructuredContent != nil || !strings.HasPrefix(tx, "search_climate_data: "+rest.Error) || !strings.Contains(tx, tc.next) {
					t.Errorf("%v: isError %v, %q\nwant REST's message %q and %q", tc.args, r.IsError, tx, rest.Error, tc.next)
				}
			}
			// The mixed-unit refusal names each unit with its count.
			r := c.call(t, "search_climate_data", map[string]any{"query": "el", "facets": []string{"unit"}})
			var sr core.SearchResponse
			if err := json.Unmarshal(structured(t, r), &sr); err != nil || len(sr.Facets["unit"]) < 2 {
				t.Fatalf("el: units %v, want several", sr.Facets)
			}
			tx := resultText(c.call(t, "search_climate_data", map[string]any{"query": "el", "sort": "a1a3"}))
			for _, u := range sr.Facets["unit"] {
				if !strings.Contains(tx, u.Value+" ("+strconv.Itoa(u.Count)+")") {
					t.Errorf("the mixed-unit refusal does not name %s (%d): %s", u.Value, u.Count, tx)
				}
			}
		})
	}
}

// TestNonsenseFindsNothingOverMCP: queries of no words in the catalogs
// answer no results with the nothing-matched note, as REST does with
// vectors (MCP searches always use them): vector neighbours of nonsense
// fall below the relevance floor.
func TestNonsenseFindsNothingOverMCP(t *testing.T) {
	e := newEnv(t, nil)
	for _, kind := range transports {
		t.Run(kind, func(t *testing.T) {
			c := e.connect(t, kind)
			for _, q := range []string{"zzzzqqq", "asdf qwerty"} {
				var text string
				got := e.equalsREST(t, q, "/api/search?vector=true&q="+url.QueryEscape(q), func() []byte {
					r := c.call(t, "search_climate_data", map[string]any{"query": q})
					text = resultText(r)
					return structured(t, r)
				})
				var sr core.SearchResponse
				if err := json.Unmarshal(got, &sr); err != nil {
					t.Fatal(err)
				}
				if len(sr.Results) != 0 || sr.Total != 0 || len(sr.Notes) != 1 || !strings.HasPrefix(sr.Notes[0], "nothing matched "+strconv.Quote(q)) ||
					!strings.Contains(sr.Notes[0], "relevance floor") {
					t.Errorf("%s: %d hits, total %d, notes %v", q, len(sr.Results), sr.Total, sr.Notes)
				}
				if !strings.Contains(text, "No resources match "+strconv.Quote(q)) || !strings.Contains(text, "Note: nothing matched") {
					t.Errorf("%s: text\n%s", q, text)
				}
			}
		})
	}
}
