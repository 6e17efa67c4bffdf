package console

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/climatesearch/climatesearch/core"
)

type comparePage struct {
	layout
	A, B, Unit string
	Impact     core.Impact
	Impacts    []core.Impact
	Lang       core.Lang
	Asked      bool
	Error      string
	Status     int
	Cmp        core.Comparison
	// Words says the result in a sentence, with the sign convention.
	Words    string
	Chart    *barChart
	CurlREST string
	MCPCall  string
}

func (c *Console) comparePage(g *gin.Context) {
	p := comparePage{layout: c.layout(g, "Compare", "compare"),
		Impacts: []core.Impact{core.ImpactTypical, core.ImpactConservative, core.ImpactA4, core.ImpactA51}}
	p.A, p.B, p.Unit = strings.TrimSpace(g.Query("a")), strings.TrimSpace(g.Query("b")), strings.TrimSpace(g.Query("unit"))
	// Two ticked hits of the query page arrive as pick=…&pick=….
	if picks := g.QueryArray("pick"); len(picks) > 0 {
		if len(picks) != 2 {
			p.Impact = core.ImpactTypical
			p.Status, p.Error = http.StatusBadRequest, fmt.Sprintf("tick exactly two hits to compare; %d were ticked", len(picks))
			c.render(g, p.Status, "compare", p)
			return
		}
		p.A, p.B = picks[0], picks[1]
	}
	var err error
	if p.Impact, err = core.ParseImpact(g.Query("impact")); err == nil {
		p.Lang, err = core.ParseLang(g.Query("lang"))
	}
	if p.Impact == "" {
		p.Impact = core.ImpactTypical
	}
	if p.Lang == "" {
		p.Lang = core.Swedish
	}
	if err != nil {
		p.Status, p.Error = statusOf(err)
		c.render(g, p.Status, "compare", p)
		return
	}
	if p.A == "" && p.B == "" {
		c.render(g, http.StatusOK, "compare", p)
		return
	}
	p.Asked = true
	q := url.Values{"a": {p.A}, "b": {p.B}}
	args := map[string]any{"a": p.A, "b": p.B}
	if p.Unit != "" {
		q.Set("unit", p.Unit)
		args["unit"] = p.Unit
	}
	if p.Impact != core.ImpactTypical {
		q.Set("impact", string(p.Impact))
		args["impact"] = string(p.Impact)
	}
	if p.Lang != core.Swedish {
		q.Set("lang", string(p.Lang))
		args["lang"] = string(p.Lang)
	}
	p.CurlREST = "curl -s '" + baseURL(g.Request) + "/api/resources/compare?" + q.Encode() + "'"
	p.MCPCall = mcpCall("compare_resources", args)
	cmp, err := c.d.Compare.Compare(g, core.CompareRequest{A: p.A, B: p.B, Unit: p.Unit, Impact: p.Impact, Lang: p.Lang})
	if err != nil {
		p.Status, p.Error = statusOf(err)
		c.render(g, p.Status, "compare", p)
		return
	}
	p.Cmp = cmp
	p.Words = compareWords(cmp)
	if !cmp.Incomparable {
		p.Chart = newBarChart(cmp)
	}
	c.render(g, http.StatusOK, "compare", p)
}

func mcpCall(tool string, args map[string]any) string {
	req := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}}
	b, _ := json.MarshalIndent(req, "", "  ")
	return string(b)
}

// compareWords states the comparison and its sign convention in words.
func compareWords(cmp core.Comparison) string {
	if cmp.Incomparable {
		return fmt.Sprintf("%s and %s cannot be stated in one unit: no declared unit or conversion connects them, so no difference is given.", cmp.A.Ref(), cmp.B.Ref())
	}
	unit := "kg CO2e per " + cmp.Unit
	delta := cmp.DeltaA1A3
	var s string
	switch {
	case delta == 0:
		s = fmt.Sprintf("Both have the same %s: %s %s.", impactName(cmp.Impact), num(cmp.ValueA), unit)
	case delta < 0:
		s = fmt.Sprintf("A (%s) has the lower %s: %s %s less than B (%s)", cmp.A.Ref(), impactName(cmp.Impact), num(-delta), unit, cmp.B.Ref())
	default:
		s = fmt.Sprintf("B (%s) has the lower %s: %s %s less than A (%s)", cmp.B.Ref(), impactName(cmp.Impact), num(delta), unit, cmp.A.Ref())
	}
	if delta != 0 && cmp.ValueA != 0 && cmp.ValueB != 0 {
		hi, lo := math.Max(cmp.ValueA, cmp.ValueB), math.Min(cmp.ValueA, cmp.ValueB)
		if lo > 0 {
			s += fmt.Sprintf(", %s%% lower", num(math.Round((hi-lo)/hi*1000)/10))
		}
		s += "."
	}
	return s + " The delta is A minus B: negative when A is lower, positive when B is lower."
}

func impactName(i core.Impact) string {
	switch i {
	case core.ImpactConservative:
		return "conservative A1-A3"
	case core.ImpactA4:
		return "A4 (transport to site)"
	case core.ImpactA51:
		return "A5.1 (construction-site waste)"
	}
	return "typical A1-A3"
}

// conversionUsed says how each side was restated in the shared unit.
func conversionUsed(r core.Resource, unit string) string {
	if r.Unit == unit || unit == "" {
		return "declared in " + unit + ", no conversion"
	}
	var used []string
	for k, v := range r.Conversions {
		top, den, ok := strings.Cut(k, "/")
		if !ok {
			continue
		}
		if (top == unit && den == r.Unit) || (top == r.Unit && den == unit) {
			used = append(used, fmt.Sprintf("%s = %s", k, num(v)))
		}
	}
	if len(used) == 0 {
		return fmt.Sprintf("restated from %s to %s through its conversions", r.Unit, unit)
	}
	return fmt.Sprintf("restated from %s to %s with %s", r.Unit, unit, strings.Join(used, ", "))
}
