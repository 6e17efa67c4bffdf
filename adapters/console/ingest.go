package console

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/climatesearch/climatesearch/core"
)

type ingestPage struct {
	layout
	MaxUpload      string
	Preview        *core.IngestPreview
	Error          string
	Status         int
	Problems       []core.FileProblem
	Catalog        core.CatalogID
	Version        string
	Mapping        map[string]string
	Fields         []mapField
	Mapped         [][]string
	Result         *core.IngestResult
	DryRun         bool
	CatalogChoices []core.Catalog
	SheetQuery     string
}

// mapField is one row of the column-map grid.
type mapField struct {
	Field, Label, Selected string
	Required               bool
}

// ingestOutcome is what the apply form leaves for the next page.
type ingestOutcome struct {
	Catalog  core.CatalogID
	Version  string
	Mapping  map[string]string
	Result   *core.IngestResult
	Problems []core.FileProblem
	Status   int
}

var requiredFields = map[string]bool{"id": true, "name": true, "a1a3": true}

func (c *Console) newIngestPage(g *gin.Context) ingestPage {
	p := ingestPage{layout: c.layout(g, "Ingest", "ingest"), MaxUpload: strconv.FormatInt(c.d.MaxUpload>>20, 10) + " MiB", Catalog: core.DKBR}
	for _, id := range core.Catalogs {
		p.CatalogChoices = append(p.CatalogChoices, core.CatalogInfo(id))
	}
	return p
}

func (c *Console) ingestPage(g *gin.Context) {
	p := c.newIngestPage(g)
	id := g.Query("preview")
	if id == "" {
		c.render(g, http.StatusOK, "ingest", p)
		return
	}
	pv, err := c.d.Files.Reopen(g, id, g.Query("sheet"))
	if err != nil {
		p.Status, p.Error = statusOf(err)
		c.render(g, p.Status, "ingest", p)
		return
	}
	p.Preview = &pv
	p.Mapping = pv.SuggestedMap
	if v := strings.TrimSpace(g.Query("version")); v != "" {
		p.Version = v
	}
	if fl, ok := readFlash[ingestOutcome](c, g, "result", false); ok {
		if out, ok := fl.Data.(ingestOutcome); ok {
			p.Catalog, p.Version, p.Mapping = out.Catalog, out.Version, out.Mapping
			p.Result, p.Problems = out.Result, out.Problems
			p.DryRun = out.Result != nil && out.Result.DryRun
		}
		p.Error = fl.Error
	}
	if p.Version == "" {
		p.Version = guessVersion(pv.Filename)
	}
	p.fillGrid()
	c.render(g, http.StatusOK, "ingest", p)
}

// guessVersion proposes a DatasetVersion from a file name (br25-… → BR25).
func guessVersion(name string) string {
	n := strings.ToUpper(name)
	for _, v := range []string{"BR25", "BR18"} {
		if strings.Contains(n, v) {
			return v
		}
	}
	return ""
}

// fillGrid lays out the column map and the first rows as they map.
func (p *ingestPage) fillGrid() {
	col := map[string]int{}
	for i, h := range p.Preview.Headers {
		col[h] = i
	}
	for _, s := range p.Preview.Schema {
		p.Fields = append(p.Fields, mapField{Field: s.Field, Label: s.Label, Selected: p.Mapping[s.Field], Required: requiredFields[s.Field]})
	}
	for _, row := range p.Preview.Sample[:min(5, len(p.Preview.Sample))] {
		var out []string
		for _, f := range p.Fields {
			v := ""
			if i, ok := col[f.Selected]; ok && f.Selected != "" && i < len(row) {
				v = row[i]
			}
			out = append(out, v)
		}
		p.Mapped = append(p.Mapped, out)
	}
}

func (c *Console) ingestUpload(g *gin.Context) {
	p := c.newIngestPage(g)
	limit := c.d.MaxUpload
	g.Request.Body = http.MaxBytesReader(g.Writer, g.Request.Body, limit+1<<20)
	fail := func(status int, msg string) {
		p.Status, p.Error = status, msg
		c.render(g, status, "ingest", p)
	}
	fh, err := g.FormFile("file")
	if err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			fail(http.StatusRequestEntityTooLarge, "upload exceeds "+p.MaxUpload+" (SERVICE_MAX_UPLOAD)")
		case errors.Is(err, http.ErrMissingFile):
			fail(http.StatusBadRequest, "no file: choose a CSV, XLSX or XLS file to upload")
		default:
			fail(http.StatusBadRequest, "unreadable upload: "+err.Error())
		}
		return
	}
	if fh.Size > limit {
		fail(http.StatusRequestEntityTooLarge, "file exceeds "+p.MaxUpload+" (SERVICE_MAX_UPLOAD)")
		return
	}
	f, err := fh.Open()
	if err != nil {
		fail(http.StatusBadRequest, "unreadable file part: "+err.Error())
		return
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	f.Close()
	if err != nil {
		fail(http.StatusBadRequest, "unreadable file part: "+err.Error())
		return
	}
	pv, err := c.d.Files.Preview(g, fh.Filename, data, strings.TrimSpace(g.PostForm("sheet")))
	if err != nil {
		status, msg := statusOf(err)
		fail(status, msg)
		return
	}
	q := url.Values{"preview": {pv.PreviewID}}
	if pv.Sheet != "" && g.PostForm("sheet") != "" {
		q.Set("sheet", pv.Sheet)
	}
	redirect(g, "/ingest?"+q.Encode())
}

func (c *Console) ingestApply(g *gin.Context) {
	id := strings.TrimSpace(g.PostForm("preview_id"))
	out := ingestOutcome{Version: strings.TrimSpace(g.PostForm("version")), Mapping: map[string]string{}}
	if err := g.Request.ParseForm(); err != nil {
		c.fail(g, http.StatusBadRequest, "unreadable form: "+err.Error())
		return
	}
	for k, vs := range g.Request.PostForm {
		if field, ok := strings.CutPrefix(k, "map."); ok && len(vs) > 0 && strings.TrimSpace(vs[0]) != "" {
			out.Mapping[field] = strings.TrimSpace(vs[0])
		}
	}
	sheet := strings.TrimSpace(g.PostForm("sheet"))
	back := url.Values{"preview": {id}}
	if sheet != "" {
		back.Set("sheet", sheet)
	}
	cat, err := core.ParseCatalog(g.PostForm("catalog"))
	fl := flash{}
	if err == nil {
		out.Catalog = cat
		var res core.IngestResult
		res, err = c.d.Files.IngestFile(g, core.FileRequest{Catalog: cat, Version: out.Version, Sheet: sheet, PreviewID: id,
			Mapping: out.Mapping, DryRun: g.PostForm("action") != "apply"})
		if err == nil {
			out.Result = &res
		}
	}
	if err != nil {
		out.Status, fl.Error = statusOf(err)
		var ce *core.Error
		if errors.As(err, &ce) {
			out.Problems = ce.Problems
		}
		if core.KindOf(err) == core.KindNotFound {
			// The preview expired: its page can no longer be shown.
			c.fail(g, http.StatusNotFound, fl.Error)
			return
		}
	}
	if out.Catalog == "" {
		out.Catalog = core.DKBR
	}
	fl.Data = out
	c.redirectFlash(g, "/ingest", back, "result", fl)
}
