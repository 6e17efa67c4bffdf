package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/climatesearch/climatesearch/core"
)

type dataPage struct {
	layout
	Status      []core.CatalogStatus
	Filter      dataFilter
	Page        core.ResourcePage
	Error       string
	Categories  []core.CategoryStats
	CatOptions  []string
	Counts      *countChart
	Spread      *stripChart
	ChartCat    core.CatalogID
	Events      []core.EventRecord
	EventsErr   string
	Flash       *flash
	Prev, Next  string
	From, To    int
	EmbedderID  string
	RerankerID  string
	HasEmbedder bool
}

type dataFilter struct {
	Catalog       string
	Category      string
	Text          string
	Withdrawn     string
	MissingVector bool
	Chart         string
	Limit         int
}

// maxSpreadRows bounds the spread chart (rows are category x unit).
const maxSpreadRows = 40

func (c *Console) data(g *gin.Context) {
	p := dataPage{layout: c.layout(g, "Data", "data"), EmbedderID: c.d.EmbedderID, RerankerID: c.d.RerankerID, HasEmbedder: c.d.EmbedderID != ""}
	if cs, err := c.d.Status.Catalogs(g); err == nil {
		p.Status = cs
	} else {
		_, p.Error = statusOf(err)
	}
	if fl, ok := readFlash[core.IngestResult](c, g, "flash", false); ok {
		p.Flash = fl
	}
	f := dataFilter{Catalog: g.Query("catalog"), Category: strings.TrimSpace(g.Query("category")), Text: strings.TrimSpace(g.Query("text")),
		Withdrawn: g.Query("withdrawn"), Chart: g.Query("chart")}
	status := http.StatusOK
	filter := core.ResourceFilter{Category: f.Category, Text: f.Text, Withdrawn: f.Withdrawn, Lang: core.Swedish}
	err := func() error {
		if f.Catalog != "" {
			id, err := core.ParseCatalog(f.Catalog)
			if err != nil {
				return err
			}
			f.Catalog = string(id)
			filter.Catalogs = []core.CatalogID{id}
		}
		var err error
		if f.MissingVector, err = boolParam(g, "missing_vector"); err != nil {
			return err
		}
		filter.MissingVector = f.MissingVector
		if v := g.Query("offset"); v != "" {
			if filter.Offset, err = strconv.Atoi(v); err != nil || filter.Offset < 0 {
				return core.Invalidf("offset must be a whole number of rows, 0 or more")
			}
		}
		if v := g.Query("limit"); v != "" {
			if filter.Limit, err = strconv.Atoi(v); err != nil || filter.Limit < 1 || filter.Limit > core.MaxBrowseLimit {
				return core.Invalidf("limit must be between 1 and %d", core.MaxBrowseLimit)
			}
		}
		return nil
	}()
	if err == nil {
		p.Page, err = c.d.Status.Browse(g, filter)
	}
	if err != nil {
		status, p.Error = statusOf(err)
	}
	f.Limit = p.Page.Limit
	p.Filter = f
	if p.Page.Total > 0 {
		p.From, p.To = p.Page.Offset+1, p.Page.Offset+len(p.Page.Resources)
	}
	link := func(offset int) string {
		q := g.Request.URL.Query()
		q.Del("flash")
		q.Set("offset", strconv.Itoa(offset))
		return "/data?" + q.Encode()
	}
	if p.Page.Offset > 0 {
		p.Prev = link(max(0, p.Page.Offset-p.Page.Limit))
	}
	if p.Page.Offset+len(p.Page.Resources) < p.Page.Total {
		p.Next = link(p.Page.Offset + p.Page.Limit)
	}

	// The charts show one catalog at a time, national unless asked.
	p.ChartCat = core.National
	if f.Chart != "" {
		if id, err := core.ParseCatalog(f.Chart); err == nil {
			p.ChartCat = id
		}
	} else if len(filter.Catalogs) == 1 {
		p.ChartCat = filter.Catalogs[0]
	}
	if cats, err := c.d.Status.Categories(g, []core.CatalogID{p.ChartCat}, core.Swedish); err == nil {
		p.Categories = cats
		for _, cs := range cats {
			p.CatOptions = append(p.CatOptions, cs.Category)
		}
		p.Counts = newCountChart(cats, func(cs core.CategoryStats) string {
			return "/data?" + url.Values{"catalog": {string(cs.Catalog)}, "category": {cs.Category}}.Encode()
		})
		var rows []spreadRow
		for _, cs := range cats {
			for _, u := range cs.Units {
				if len(rows) < maxSpreadRows {
					rows = append(rows, spreadRow{Label: cs.Category + " · " + u.Unit, Spread: u})
				}
			}
		}
		p.Spread = newStripChart(rows, "")
	}
	if p.Admin {
		evs, err := c.d.Webhooks.Events(g, 20)
		if err != nil {
			_, p.EventsErr = statusOf(err)
		}
		p.Events = evs
	}
	c.render(g, status, "data", p)
}

// dataIngest runs the upstream ingest of a catalog now.
func (c *Console) dataIngest(g *gin.Context) {
	cat, err := core.ParseCatalog(g.PostForm("catalog"))
	if err != nil {
		c.failErr(g, err)
		return
	}
	res, err := c.d.Ingest.RunUpstream(g, cat)
	fl := flash{}
	if err != nil {
		_, fl.Error = statusOf(err)
		fl.Error = "The ingest of " + string(cat) + " failed: " + fl.Error
	} else {
		fl.Notice = "Ingest of " + string(cat) + " finished."
		fl.Data = res
	}
	c.redirectFlash(g, "/data", nil, "flash", fl)
}
