package console

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/climatesearch/climatesearch/core"
)

// queryForm is the question on the query page, with REST's defaults.
type queryForm struct {
	Q        string
	Lang     core.Lang
	Catalogs map[core.CatalogID]bool
	Vector   bool
	Rerank   bool
	Limit    int
	Inspect  bool
}

type queryPage struct {
	layout
	Form       queryForm
	AllCats    []core.Catalog
	Asked      bool
	Error      string
	Status     int
	Resp       core.SearchResponse
	Took       string
	CurlREST   string
	MCPRequest string
	RESTURL    string
	Inspector  *inspection
	MaxLimit   int
	MaxQuery   int
}

func refererPath(ref string) string {
	u, err := url.Parse(ref)
	if err != nil {
		return "/"
	}
	return localPath(u.RequestURI())
}

// catalogParams reads the catalog checkboxes (repeated `databases`, each
// also a comma list as REST takes it); none ticked means all.
func catalogParams(vals []string) ([]core.CatalogID, error) {
	var parts []string
	for _, v := range vals {
		parts = append(parts, strings.Split(v, ",")...)
	}
	return core.ParseCatalogs(parts)
}

func boolParam(g *gin.Context, name string) (bool, error) {
	v := g.Query(name)
	if v == "" {
		return false, nil
	}
	if v == "on" {
		return true, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, core.Invalidf("%s must be true or false, got %q", name, v)
	}
	return b, nil
}

func (c *Console) query(g *gin.Context) {
	p := queryPage{layout: c.layout(g, "Query", "query"), MaxLimit: core.MaxLimit, MaxQuery: core.MaxQueryLen}
	for _, id := range core.Catalogs {
		p.AllCats = append(p.AllCats, core.CatalogInfo(id))
	}
	f := queryForm{Q: strings.TrimSpace(g.Query("q")), Catalogs: map[core.CatalogID]bool{}, Limit: core.DefaultLimit}
	p.Form = f
	status := http.StatusOK
	err := func() error {
		var err error
		if f.Lang, err = core.ParseLang(g.Query("lang")); err != nil {
			return err
		}
		cats, err := catalogParams(g.QueryArray("databases"))
		if err != nil {
			return err
		}
		for _, id := range cats {
			f.Catalogs[id] = true
		}
		if f.Vector, err = boolParam(g, "vector"); err != nil {
			return err
		}
		if f.Rerank, err = boolParam(g, "rerank"); err != nil {
			return err
		}
		if f.Inspect, err = boolParam(g, "inspect"); err != nil {
			return err
		}
		if v := g.Query("limit"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > core.MaxLimit {
				return core.Invalidf("limit must be an integer between 1 and %d", core.MaxLimit)
			}
			f.Limit = n
		}
		return nil
	}()
	if f.Lang == "" {
		f.Lang = core.Swedish
	}
	if len(f.Catalogs) == 0 {
		for _, id := range core.Catalogs {
			f.Catalogs[id] = true
		}
	}
	p.Form = f
	if err != nil {
		status, p.Error = statusOf(err)
		p.Status = status
		c.render(g, status, "query", p)
		return
	}
	if f.Q == "" {
		c.render(g, status, "query", p)
		return
	}
	p.Asked = true
	req := f.request()
	start := time.Now()
	resp, err := c.d.Search.Search(g, req)
	p.Took = formatDuration(time.Since(start))
	if err != nil {
		status, p.Error = statusOf(err)
		p.Status = status
		c.render(g, status, "query", p)
		return
	}
	p.Resp = resp
	base := baseURL(g.Request)
	p.RESTURL = "/api/search?" + f.restQuery().Encode()
	p.CurlREST = "curl -s '" + base + p.RESTURL + "'"
	p.MCPRequest = mcpSearchRequest(f)
	if f.Inspect {
		p.Inspector = c.inspect(g, f)
	}
	c.render(g, status, "query", p)
}

func (f queryForm) catalogs() []core.CatalogID {
	var out []core.CatalogID
	for _, id := range core.Catalogs {
		if f.Catalogs[id] {
			out = append(out, id)
		}
	}
	return out
}

func (f queryForm) allCatalogs() bool { return len(f.catalogs()) == len(core.Catalogs) }

func (f queryForm) request() core.SearchRequest {
	return core.SearchRequest{Query: f.Q, Lang: f.Lang, Catalogs: f.catalogs(), Vector: f.Vector, Rerank: f.Rerank, Limit: f.Limit}
}

// restQuery is the REST question of the form, leaving out defaults.
func (f queryForm) restQuery() url.Values {
	v := url.Values{"q": {f.Q}}
	if f.Lang != core.Swedish {
		v.Set("lang", string(f.Lang))
	}
	if !f.allCatalogs() {
		v.Set("databases", joinIDs(f.catalogs()))
	}
	if f.Vector {
		v.Set("vector", "true")
	}
	if f.Rerank {
		v.Set("rerank", "true")
	}
	if f.Limit != core.DefaultLimit {
		v.Set("limit", strconv.Itoa(f.Limit))
	}
	return v
}

func joinIDs(ids []core.CatalogID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = string(id)
	}
	return strings.Join(s, ",")
}

// mcpArgs are the search tool's arguments for the form's question.
func (f queryForm) mcpArgs() map[string]any {
	args := map[string]any{"query": f.Q, "lang": string(f.Lang), "limit": min(f.Limit, mcpMaxLimit)}
	if !f.allCatalogs() {
		dbs := []string{}
		for _, id := range f.catalogs() {
			dbs = append(dbs, string(id))
		}
		args["databases"] = dbs
	}
	return args
}

// mcpMaxLimit is the search tool's largest limit.
const mcpMaxLimit = 50

const mcpSearchTool = "search_climate_data"

func mcpSearchRequest(f queryForm) string {
	req := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": mcpSearchTool, "arguments": f.mcpArgs()}}
	b, _ := json.MarshalIndent(req, "", "  ")
	return string(b)
}

func formatDuration(d time.Duration) string {
	ms := float64(d.Microseconds()) / 1000
	switch {
	case ms < 10:
		return strconv.FormatFloat(ms, 'f', 2, 64) + " ms"
	case ms < 1000:
		return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
	}
	return strconv.FormatFloat(ms/1000, 'f', 2, 64) + " s"
}
