package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/climatesearch/climatesearch/core"
)

// search_climate_data takes every refinement REST search takes and hands
// the core the request REST would: filters, paging, sort, ranges, facets
// and highlight, numbers as numbers or as the text REST reads.
func TestSearchTakesTheRefinementsRESTTakes(t *testing.T) {
	f := newFixture(t, false)
	r := f.call(t, ToolSearch, `{"query":"betong","databases":["national"],"limit":5,"offset":20,"category":" Betong ","unit":"kg","sort":"-a1a3",
		"facets":["unit","Category","unit"],"highlight":true,"a1a3_min":0.05,"a1a3_max":"0.2","a4_max":0,"a5_1_min":1e-3}`)
	if r.IsError {
		t.Fatal(text(r))
	}
	got := f.s.last(t)
	if got.Limit != 5 || got.Offset != 20 || got.Category != "Betong" || got.Unit != "kg" || got.Sort != (core.SortSpec{Impact: core.ImpactTypical, Desc: true}) ||
		strings.Join(got.Facets, ",") != "unit,category" || !got.Highlight || !got.Vector || got.Explain {
		t.Fatalf("request %+v", got)
	}
	want := map[core.Impact][2]string{core.ImpactTypical: {"0.05", "0.2"}, core.ImpactA4: {"", "0"}, core.ImpactA51: {"0.001", ""}}
	if len(got.Ranges) != len(want) {
		t.Fatalf("ranges %+v", got.Ranges)
	}
	for _, rg := range got.Ranges {
		w, ok := want[rg.Impact]
		if !ok || bound(rg.Min) != w[0] || bound(rg.Max) != w[1] {
			t.Errorf("range %s: [%s, %s], want %v", rg.Impact, bound(rg.Min), bound(rg.Max), w)
		}
	}
	// A single string of facets is a comma-separated list, as REST's parameter.
	f.call(t, ToolSearch, `{"query":"x","facets":"catalog,unit","sort":"a4"}`)
	if got = f.s.last(t); strings.Join(got.Facets, ",") != "catalog,unit" || got.Sort != (core.SortSpec{Impact: core.ImpactA4}) || got.Offset != 0 || got.Highlight {
		t.Fatalf("request %+v", got)
	}
	// Absent and null refinements are REST's defaults: nothing refined.
	f.call(t, ToolSearch, `{"query":"x","offset":null,"sort":null,"facets":null,"a1a3_min":null,"a4_max":" ","category":"","highlight":false}`)
	if got = f.s.last(t); got.Refine.Active() || got.Offset != 0 || got.Highlight {
		t.Fatalf("request %+v", got)
	}
}

func bound(p *float64) string {
	if p == nil {
		return ""
	}
	return fmtNum(*p)
}

// Malformed refinements are refused before the core is asked, with REST's
// messages (core.ParseSort, core.BoundError, core.Refine.Normalize) and
// what to do next.
func TestBadRefinementsAreToolErrorsWithRESTsMessages(t *testing.T) {
	f := newFixture(t, false)
	for _, tc := range []struct{ args, want string }{
		{`{"query":"x","offset":-1}`, "offset must be an integer between 0 and 1000"},
		{`{"query":"x","offset":1001}`, "offset must be an integer between 0 and 1000"},
		{`{"query":"x","sort":"price"}`, `unknown sort "price": use one of a1a3, a1a3_conservative, a4, a5_1, with a leading - for descending`},
		{`{"query":"x","facets":["colour"]}`, `unknown facet "colour": use category, unit, catalog`},
		{`{"query":"x","facets":[1]}`, `facets must be an array of strings, e.g. ["category", "unit"]`},
		{`{"query":"x","a1a3_min":"abc"}`, `a1a3_min must be a number (kg CO2e per declared unit, e.g. a1a3_min=100), got "abc"`},
		{`{"query":"x","a4_max":true}`, `a4_max must be a number (kg CO2e per declared unit, e.g. a4_max=100), got true`},
		{`{"query":"x","a1a3_min":5,"a1a3_max":1}`, "a1a3_min (5) is above a1a3_max (1)"},
		{`{"query":"x","highlight":"yes"}`, `highlight must be true or false, got "yes"`},
		{`{"query":"x","category":3}`, "category must be a string"},
		{`{"query":"x","unit":["kg"]}`, "unit must be a string"},
		{`{"query":"x","explain":true}`, `unknown argument "explain"; this tool accepts query, lang, databases, limit, offset, category, unit, sort, facets, highlight, a1a3_min, a1a3_max, a1a3_conservative_min`},
	} {
		before := len(f.s.got)
		r := f.call(t, ToolSearch, tc.args)
		tx := text(r)
		if !r.IsError || !strings.Contains(tx, tc.want) || !strings.Contains(strings.ToLower(tx), "call again") {
			t.Errorf("%s: isError %v, %q (want %q and what to do next)", tc.args, r.IsError, tx, tc.want)
		}
		if len(f.s.got) != before {
			t.Errorf("%s: the core was asked", tc.args)
		}
	}
	// The core's refusals get a hint that fits them.
	for msg, hint := range map[string]string{
		"sort=a1a3 orders values per declared unit, but the matches are declared in 2 units: kg (5), m³ (2); add unit=<one of them> to sort within one unit": "Call again with unit set to one of the units named above",
		`unknown category "Betng" in catalog national: did you mean "Betong"?`:                                                                               "Call again with one of the values named above, or without the filter",
	} {
		f.s.err = core.Invalidf("%s", msg)
		tx := text(f.call(t, ToolSearch, `{"query":"x","sort":"a1a3"}`))
		if !strings.HasPrefix(tx, ToolSearch+": "+msg+". "+hint) {
			t.Errorf("%q", tx)
		}
	}
}

// The text of a refined search says what was asked (filters, order, page),
// numbers the hits by their place in the whole answer, shows the value
// sorted on, the words marked, and the facet counts.
func TestRefinedSearchTextSaysWhatWasAskedAndCounts(t *testing.T) {
	pb := particleBoard()
	pb.Localize(core.Swedish)
	osb := particleBoard()
	osb.ID, osb.NameSV, osb.A4 = "6000000024", "OSB-skiva", nil
	osb.Localize(core.Swedish)
	lo, hi := 0.1, 0.5
	req := core.SearchRequest{Catalogs: []core.CatalogID{core.National}, Offset: 10,
		Refine: core.Refine{Category: "Byggskivor", Unit: "m3", Sort: core.SortSpec{Impact: core.ImpactA4},
			Ranges: []core.Range{{Impact: core.ImpactTypical, Min: &lo, Max: &hi}, {Impact: core.ImpactA4, Max: &hi}}}}
	facets := core.Facets{"unit": {{Value: "kg", Count: 40}, {Value: "m³", Count: 2}}, "catalog": {{Value: "national", Count: 42}}}
	for i := 0; i < 12; i++ {
		facets["category"] = append(facets["category"], core.FacetValue{Value: "C" + string(rune('a'+i)), Count: 12 - i})
	}
	resp := core.SearchResponse{Source: "S", Query: "skiva", Lang: core.Swedish, Total: 42, Facets: facets, Results: []core.Hit{
		{Resource: pb, MatchSource: core.MatchBoth, Highlight: &core.Highlight{Name: "<mark>Spånskiva</mark>", Description: "en <mark>skiva</mark> &amp; <mark>Spånskiva</mark>"}},
		{Resource: osb, MatchSource: core.MatchFTS},
	}}
	tx := searchText(resp, req)
	for _, want := range []string{
		`2 of 42 matching resources for "skiva" (lang sv; catalogs national; category Byggskivor; unit m³; a1a3 from 0.1 to 0.5; a4 at most 0.5), lowest A4 first (sort a4), from number 11:`,
		"11. Spånskiva [national:6000000000]: A1-A3 typical 0.39 kg CO2 eq./kg (conservative 0.488); A4 0.0629; matched by full text and vector similarity (marked: Spånskiva, skiva);",
		"12. OSB-skiva [national:6000000024]: A1-A3 typical 0.39 kg CO2 eq./kg (conservative 0.488); A4 not published; matched by full text;",
		"By category over all 42 matches: Ca 12, Cb 11, Cc 10, Cd 9, Ce 8, Cf 7, Cg 6, Ch 5, Ci 4, Cj 3 and 2 more\n",
		"By unit over all 42 matches: kg 40, m³ 2\nBy catalog over all 42 matches: national 42\n",
	} {
		if !strings.Contains(tx, want) {
			t.Errorf("text lacks %q:\n%s", want, tx)
		}
	}
	if strings.Contains(tx, "\n1. ") || strings.Contains(tx, "<mark>") {
		t.Errorf("hits numbered from 1 on a later page, or markup in the text:\n%s", tx)
	}
	// The structured content keeps every facet value.
	b, _ := json.Marshal(resp)
	if !strings.Contains(string(b), `{"value":"Cl","count":1}`) {
		t.Errorf("structured content lost a facet value: %s", b)
	}

	// Descending; a page past the end; nothing within the filters.
	req = core.SearchRequest{Refine: core.Refine{Sort: core.SortSpec{Impact: core.ImpactTypical, Desc: true}}}
	if tx := searchText(core.SearchResponse{Query: "x", Lang: core.Swedish, Total: 3, Results: resp.Results[:1]}, req); !strings.Contains(tx, "1 of 3 matching resource for \"x\" (lang sv; catalogs national, dkbr), highest A1-A3 typical first (sort -a1a3):\n1. Spånskiva") {
		t.Errorf("descending:\n%s", tx)
	}
	req = core.SearchRequest{Offset: 40}
	if tx := searchText(core.SearchResponse{Query: "x", Lang: core.Swedish, Total: 7, Results: []core.Hit{}}, req); !strings.Contains(tx, `7 resources match "x" (lang sv; catalogs national, dkbr), none at offset 40 or later: call again with an offset below 7.`) {
		t.Errorf("past the end:\n%s", tx)
	}
	req = core.SearchRequest{Refine: core.Refine{Unit: "kg"}}
	if tx := searchText(core.SearchResponse{Query: "x", Lang: core.Swedish, Results: []core.Hit{}, Facets: core.Facets{"unit": {}}}, req); !strings.Contains(tx, `No resources match "x" (lang sv; catalogs national, dkbr; unit kg). Try other or fewer words, a synonym, or the other language (lang sv or en), or fewer filters.`) ||
		!strings.Contains(tx, "By unit over all 0 matches: none") {
		t.Errorf("nothing within the filters:\n%s", tx)
	}
}

// The search schema offers every refinement with a closed set where there
// is one, and its output schema the answer's new fields.
func TestSearchSchemaOffersTheRefinements(t *testing.T) {
	f := newFixture(t, false)
	var in struct {
		Properties map[string]struct {
			Type  string   `json:"type"`
			Enum  []string `json:"enum"`
			Items struct {
				Enum []string `json:"enum"`
			} `json:"items"`
			Maximum *int `json:"maximum"`
		} `json:"properties"`
	}
	raw := f.tools[ToolSearch].RawInputSchema
	if raw == nil {
		raw, _ = json.Marshal(f.tools[ToolSearch].InputSchema)
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		t.Fatal(err)
	}
	for _, name := range searchArgs {
		if _, ok := in.Properties[name]; !ok {
			t.Errorf("the input schema lacks %s", name)
		}
	}
	if len(in.Properties) != len(searchArgs) {
		t.Errorf("%d properties, %d arguments accepted", len(in.Properties), len(searchArgs))
	}
	if p := in.Properties["sort"]; len(p.Enum) != 8 || p.Enum[1] != "-a1a3" {
		t.Errorf("sort enum %v", p.Enum)
	}
	if p := in.Properties["facets"]; strings.Join(p.Items.Enum, ",") != "category,unit,catalog" {
		t.Errorf("facets enum %v", p.Items.Enum)
	}
	if p := in.Properties["offset"]; p.Maximum == nil || *p.Maximum != core.MaxOffset {
		t.Errorf("offset maximum %v", p.Maximum)
	}
	if p := in.Properties["a5_1_max"]; p.Type != "number" {
		t.Errorf("a5_1_max type %q", p.Type)
	}
	d := f.tools[ToolSearch].Description + string(raw)
	for _, w := range []string{"Danish", "ÖKOBAUDAT", "mineraluld"} {
		if !strings.Contains(d, w) {
			t.Errorf("the search tool does not say %q is searchable", w)
		}
	}
	if !strings.Contains(f.tools[ToolDetails].Description, "Danish") {
		t.Errorf("get_resource_details does not mention the Danish names: %s", f.tools[ToolDetails].Description)
	}

	// A refined answer with facets and highlight matches the output schema.
	f.s.resp.Total, f.s.resp.TookMs = 1, 0.5
	f.s.resp.Facets = core.Facets{"unit": {{Value: "kg", Count: 1}}}
	f.s.resp.Results[0].Highlight = &core.Highlight{Name: "<mark>Spånskiva</mark>"}
	r := f.call(t, ToolSearch, `{"query":"spånskiva","facets":["unit"],"highlight":true}`)
	f.validateOutput(t, ToolSearch, r)
	b, _ := json.Marshal(r.StructuredContent)
	for _, w := range []string{`"total":1`, `"took_ms":0.5`, `"facets":{"unit":[{"count":1,"value":"kg"}]}`, `"highlight":{"name":"\u003cmark\u003eSpånskiva\u003c/mark\u003e"}`} {
		if !strings.Contains(string(b), w) {
			t.Errorf("structured content lacks %s: %s", w, b)
		}
	}
}
