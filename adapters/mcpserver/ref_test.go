package mcpserver

import (
	"strings"
	"testing"

	"github.com/climatesearch/climatesearch/core"
)

func TestResourceRefDecodesDetailsPaths(t *testing.T) {
	for in, want := range map[string]string{
		"dkbr:#G0740":                  "dkbr:#G0740",
		"national:6000000000":          "national:6000000000",
		"/api/resources/dkbr:%23G0740": "dkbr:#G0740",
		" http://127.0.0.1:8080/api/resources/dkbr:%23G0740?lang=en ": "dkbr:#G0740",
		"dkbr:%23G0740":             "dkbr:#G0740",
		"/api/resources/dkbr:a%20b": "dkbr:a b",
		"50%":                       "50%", // not an escape: taken literally
	} {
		got, err := resourceRef(in)
		if err != nil || got != want {
			t.Errorf("resourceRef(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"/api/resources/", "/api/resources/dkbr:%zz"} {
		if _, err := resourceRef(in); core.KindOf(err) != core.KindInvalid || !strings.Contains(err.Error(), "details path") {
			t.Errorf("resourceRef(%q): want an invalid-argument error naming the details path, got %v", in, err)
		}
	}
}

// A hit's details path works as the id of get_resource_details and of
// compare_resources; a broken one is a tool error that says why.
func TestToolsTakeDetailsPaths(t *testing.T) {
	f := newFixture(t, false)
	if r := f.call(t, ToolDetails, `{"id":"/api/resources/dkbr:%23G0740"}`); r.IsError || f.r.gotRef != "dkbr:#G0740" {
		t.Fatalf("details: ref %q, %s", f.r.gotRef, text(r))
	}
	if r := f.call(t, ToolCompare, `{"a":"/api/resources/dkbr:%23G0740","b":"dkbr:%23G0767"}`); r.IsError || f.c.got.A != "dkbr:#G0740" || f.c.got.B != "dkbr:#G0767" {
		t.Fatalf("compare: %+v, %s", f.c.got, text(r))
	}
	if r := f.call(t, ToolDetails, `{"id":"/api/resources/dkbr:%G0740"}`); !r.IsError || !strings.Contains(text(r), "details path") {
		t.Fatalf("broken details path: %s", text(r))
	}
}

// The text of a Tabel 7 #G row asked in English shows the Danish name, says
// that no English name is published, and gives the German name as German.
func TestDetailsTextSaysTheNameIsAFallback(t *testing.T) {
	r := core.Resource{ID: "#G0740", Catalog: core.DKBR, NameDA: "Betonrør, armeret", NameDE: "Betonrohr, bewehrt", Source: core.SourceDKBR}
	r.Localize(core.English)
	tx := detailsText(&r, core.English)
	for _, want := range []string{"Betonrør, armeret [dkbr:#G0740] (German: Betonrohr, bewehrt)", "Name in Danish: no English name is published."} {
		if !strings.Contains(tx, want) {
			t.Errorf("missing %q in\n%s", want, tx)
		}
	}
	r.Localize(core.Swedish)
	if tx := detailsText(&r, core.Swedish); !strings.Contains(tx, "Name in Danish: no Swedish name is published.") {
		t.Errorf("Swedish:\n%s", tx)
	}
	resp := core.SearchResponse{Source: "S", Query: "betonrør", Lang: core.English, Results: []core.Hit{{Resource: r}}}
	resp.Results[0].Localize(core.English)
	if tx := searchText(resp, core.SearchRequest{}); !strings.Contains(tx, "1. Betonrør, armeret [dkbr:#G0740] (name in Danish)") {
		t.Errorf("search text:\n%s", tx)
	}
}
