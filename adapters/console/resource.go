package console

import (
	"net/http"
	"net/url"
	"sort"

	"github.com/gin-gonic/gin"

	"github.com/climatesearch/climatesearch/core"
)

type resourcePage struct {
	layout
	Ref        string
	Lang       core.Lang
	Error      string
	Status     int
	Candidates []string
	R          core.Resource
	Values     []valueRow
	Convs      []convRow
	HasOrigin  bool
	CurlREST   string
	MCPCall    string
	Peers      *stripChart
}

type valueRow struct {
	Label, Field string
	Value        *float64
	Unit         string
}

type convRow struct {
	Ratio string
	Value float64
}

func (c *Console) resource(g *gin.Context) {
	ref := g.Param("ref")
	p := resourcePage{layout: c.layout(g, ref, ""), Ref: ref}
	lang, err := core.ParseLang(g.Query("lang"))
	if err != nil {
		p.Status, p.Error = statusOf(err)
		c.render(g, p.Status, "resource", p)
		return
	}
	p.Lang = lang
	r, err := c.d.Resources.Get(g, ref, lang)
	if err != nil {
		p.Status, p.Error = statusOf(err)
		if ce, ok := err.(*core.Error); ok {
			for _, cat := range ce.Candidates {
				p.Candidates = append(p.Candidates, string(cat)+":"+ref)
			}
		}
		c.render(g, p.Status, "resource", p)
		return
	}
	p.R = r
	p.Title = r.Name
	unit := r.GWPUnit
	if unit == "" && r.Unit != "" {
		unit = "kg CO2e/" + r.Unit
	}
	p.Values = []valueRow{
		{"A1-A3 typical", "a1a3", r.A1A3, unit},
		{"A1-A3 conservative", "a1a3_conservative", r.A1A3Conservative, unit},
		{"A4 transport to site", "a4", r.A4, unit},
		{"A5.1 construction-site waste", "a5_1", r.A51, unit},
	}
	for k, v := range r.Conversions {
		p.Convs = append(p.Convs, convRow{k, v})
	}
	sort.Slice(p.Convs, func(i, j int) bool { return p.Convs[i].Ratio < p.Convs[j].Ratio })
	p.HasOrigin = core.CatalogInfo(r.Catalog).HasOrigin && r.Origin != ""
	q := ""
	args := map[string]any{"id": r.Ref()}
	if lang != core.Swedish {
		q = "?lang=" + string(lang)
		args["lang"] = string(lang)
	}
	p.CurlREST = "curl -s '" + baseURL(g.Request) + "/api/resources/" + url.PathEscape(r.Ref()) + q + "'"
	p.MCPCall = mcpCall("get_resource_details", args)
	if r.A1A3 != nil && !r.Withdrawn {
		if cats, err := c.d.Status.Categories(g, []core.CatalogID{r.Catalog}, lang); err == nil {
			for _, cs := range cats {
				if cs.Category != r.Category {
					continue
				}
				for _, u := range cs.Units {
					if u.Unit == r.Unit {
						p.Peers = newStripChart([]spreadRow{{Label: cs.Category + " · " + u.Unit, Spread: u}}, r.Ref())
					}
				}
			}
		}
	}
	c.render(g, http.StatusOK, "resource", p)
}
