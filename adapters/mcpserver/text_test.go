package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/climatesearch/climatesearch/core"
)

// The text of a search says how each hit matched and writes values with the
// publisher's digits; the structured content keeps the full value.
func TestSearchTextSaysHowEachHitMatchedAndRoundsToThePublishedDigits(t *testing.T) {
	pb := particleBoard()
	pb.Localize(core.Swedish)
	tenth := 0.1
	conservative := tenth * 3 // 0.30000000000000004 in binary floats
	pb.A1A3Conservative = &conservative
	other := particleBoard()
	other.ID, other.NameSV = "6000000024", "OSB-skiva"
	other.Localize(core.Swedish)
	vec := particleBoard()
	vec.ID, vec.NameSV = "6000000169", "Formskiva"
	vec.Localize(core.Swedish)
	resp := core.SearchResponse{Source: "S", Query: "spånskiva", Lang: core.Swedish, Total: 7, Results: []core.Hit{
		{Resource: pb, MatchSource: core.MatchBoth},
		{Resource: other, MatchSource: core.MatchFTS},
		{Resource: vec, MatchSource: core.MatchVector},
	}}
	tx := searchText(resp, core.SearchRequest{})
	for _, want := range []string{
		"3 of 7 matching resources",
		"1. Spånskiva [national:6000000000]: A1-A3 typical 0.39 kg CO2 eq./kg (conservative 0.3); matched by full text and vector similarity",
		"2. OSB-skiva [national:6000000024]: A1-A3 typical 0.39 kg CO2 eq./kg (conservative 0.488); matched by full text;",
		"3. Formskiva [national:6000000169]: A1-A3 typical 0.39 kg CO2 eq./kg (conservative 0.488); matched by vector similarity only",
	} {
		if !strings.Contains(tx, want) {
			t.Errorf("text lacks %q:\n%s", want, tx)
		}
	}
	if strings.Contains(tx, "0.30000000000000004") {
		t.Errorf("text keeps a float artefact:\n%s", tx)
	}
	b, _ := json.Marshal(resp)
	if !strings.Contains(string(b), "0.30000000000000004") {
		t.Errorf("structured content lost the full value: %s", b)
	}
	for v, want := range map[float64]string{0.0629: "0.0629", 700: "700", 273.00000000000006: "273", 1234.5678: "1234.5678", 0: "0"} {
		if got := fmtNum(v); got != want {
			t.Errorf("fmtNum(%v) = %q, want %q", v, got, want)
		}
	}
}

// A search that matched nothing says so, with the core's note.
func TestEmptySearchTextCarriesTheNothingMatchedNote(t *testing.T) {
	tx := searchText(core.SearchResponse{Source: "S", Query: "zzzzqqq", Lang: core.Swedish, Results: []core.Hit{},
		Notes: []string{`nothing matched "zzzzqqq": no resource holds these words`}}, core.SearchRequest{})
	if !strings.Contains(tx, `No resources match "zzzzqqq"`) || !strings.Contains(tx, `Note: nothing matched "zzzzqqq"`) {
		t.Fatalf("%s", tx)
	}
}
