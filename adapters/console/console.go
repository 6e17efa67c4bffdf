// Package console is the operator console: server-rendered HTML pages
// (html/template) for people who run the service. It is a driver adapter
// like httpapi and mcpserver: every page calls the same driver ports as
// REST and MCP, never the store. Templates, styles and the one small script
// are embedded; nothing is loaded from another host.
//
// Every page works without JavaScript: reads are GET forms, changes are
// POST forms answered with a redirect (post/redirect/get). The script only
// adds comfort (copy buttons, pick-two-to-compare, live mapping preview, id
// autocomplete).
package console

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static/*
var staticFS embed.FS

// Deps are the driver ports and settings the console needs.
type Deps struct {
	Search    ports.Searcher
	Resources ports.Resources
	Compare   ports.Comparer
	Ingest    ports.Ingester
	Files     ports.FileIngester
	Webhooks  ports.Webhooks
	Status    ports.Status
	// AdminToken, when set, guards the pages that change or reveal operator
	// data behind a sign-in.
	AdminToken string
	MaxUpload  int64
	// SelfURL is the base URL this process answers on over loopback; the
	// inspector calls its own /api and /mcp there.
	SelfURL func() string
	// SelfHeaders go with the inspector's loopback calls (the hosted
	// build's guard lets this process's own calls through with them).
	SelfHeaders map[string]string
	// MCPRerank tells whether MCP search reranks (a reranker is configured).
	MCPRerank bool
	// EmbedderID and RerankerID describe the retrieval setup ("" when none).
	EmbedderID string
	RerankerID string
	Log        *zap.Logger
	// Sessions keeps the sign-in sessions and the flashes (the outcome of
	// a form post, for the page it redirects to): the store, shared by
	// every replica over a shared store; in memory when nil.
	Sessions ports.KV
	// Now is the clock (tests); time.Now when nil.
	Now func() time.Time
}

// Console serves the pages.
type Console struct {
	d        Deps
	pages    map[string]*template.Template
	sessions *sessions
	flashes  *flashes
	cop      *http.CrossOriginProtection
	static   fs.FS
}

// New parses the templates; it fails only on a template error.
func New(d Deps) (*Console, error) {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = zap.NewNop()
	}
	if d.MaxUpload <= 0 {
		d.MaxUpload = core.DefaultMaxUpload
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	st, _ := fs.Sub(staticFS, "static")
	c := &Console{d: d, pages: pages, sessions: newSessions(d.Sessions, d.Now), flashes: newFlashes(d.Sessions, d.Now),
		cop: http.NewCrossOriginProtection(), static: st}
	return c, nil
}

// Paths of the console.
const (
	StaticPrefix = "/console/static/"
)

// Mount registers the console's routes on r.
func (c *Console) Mount(r gin.IRoutes) {
	h := func(fn func(*gin.Context)) []gin.HandlerFunc { return []gin.HandlerFunc{c.headers, c.crossOrigin, fn} }
	admin := func(fn func(*gin.Context)) []gin.HandlerFunc {
		return []gin.HandlerFunc{c.headers, c.crossOrigin, c.requireAdmin, fn}
	}
	r.GET("/", h(c.query)...)
	r.GET("/resources/:ref", h(c.resource)...)
	r.GET("/compare", h(c.comparePage)...)
	r.GET("/connect", h(c.connect)...)
	r.GET("/data", h(c.data)...)
	r.POST("/data/ingest", admin(c.dataIngest)...)

	r.GET("/ingest", admin(c.ingestPage)...)
	r.POST("/ingest/upload", admin(c.ingestUpload)...)
	r.POST("/ingest/apply", admin(c.ingestApply)...)

	r.GET("/webhooks", admin(c.webhooksPage)...)
	r.POST("/webhooks", admin(c.webhookCreate)...)
	r.GET("/webhooks/:id", admin(c.webhookPage)...)
	r.POST("/webhooks/:id", admin(c.webhookUpdate)...)
	r.POST("/webhooks/:id/enabled", admin(c.webhookEnabled)...)
	r.POST("/webhooks/:id/rotate", admin(c.webhookRotate)...)
	r.POST("/webhooks/:id/test", admin(c.webhookTest)...)
	r.GET("/webhooks/:id/delete", admin(c.webhookDeleteConfirm)...)
	r.POST("/webhooks/:id/delete", admin(c.webhookDelete)...)

	r.GET("/signin", h(c.signinPage)...)
	r.POST("/signin", h(c.signin)...)
	r.POST("/signout", h(c.signout)...)

	r.GET(StaticPrefix+"*file", c.headers, c.staticFile)
}

// csp allows only this origin's own script and styles: no inline script,
// no inline style, no framing.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// headers sets the strict headers of every console answer.
func (c *Console) headers(g *gin.Context) {
	h := g.Writer.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	if !strings.HasPrefix(g.Request.URL.Path, StaticPrefix) {
		h.Set("Cache-Control", "no-store")
	}
}

// crossOrigin refuses state-changing requests from other sites (Go's
// CrossOriginProtection: Sec-Fetch-Site, then Origin against Host).
func (c *Console) crossOrigin(g *gin.Context) {
	if err := c.cop.Check(g.Request); err != nil {
		c.fail(g, http.StatusForbidden, "This request came from another site, so it was refused and nothing changed. Use the form on this console's own page.")
	}
}

func (c *Console) staticFile(g *gin.Context) {
	name := strings.TrimPrefix(g.Param("file"), "/")
	b, err := fs.ReadFile(c.static, name)
	if err != nil {
		g.AbortWithStatus(http.StatusNotFound)
		return
	}
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = "application/octet-stream"
	}
	g.Header("Cache-Control", "public, max-age=3600")
	g.Data(http.StatusOK, ct, b)
}

// --- rendering ----------------------------------------------------------

// layout is what every page shows around its content.
type layout struct {
	Title    string
	Nav      string // the active page
	Catalogs []core.CatalogStatus
	// CatalogsErr says why the catalog strip is missing.
	CatalogsErr string
	Admin       bool // the visitor may use admin pages
	Guarded     bool // an admin token is configured
	SignedIn    bool
	Path        string
	Sources     []core.Catalog
}

func (c *Console) layout(g *gin.Context, title, nav string) layout {
	l := layout{Title: title, Nav: nav, Guarded: c.d.AdminToken != "", Path: g.Request.URL.RequestURI()}
	l.SignedIn = c.signedIn(g)
	l.Admin = !l.Guarded || l.SignedIn
	for _, id := range core.Catalogs {
		l.Sources = append(l.Sources, core.CatalogInfo(id))
	}
	cs, err := c.d.Status.Overview(g)
	if err != nil {
		l.CatalogsErr = err.Error()
	}
	l.Catalogs = cs
	return l
}

// render writes a page with status.
func (c *Console) render(g *gin.Context, status int, page string, data any) {
	t, ok := c.pages[page]
	if !ok {
		panic("console: no page template " + page)
	}
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, "layout", data); err != nil {
		c.d.Log.Error("rendering a console page failed", zap.String("page", page), zap.String("request_id", core.RequestID(g.Request.Context())), zap.Error(err))
		g.Data(http.StatusInternalServerError, "text/plain; charset=utf-8", []byte("internal error rendering the page; the incident is logged"))
		g.Abort()
		return
	}
	g.Data(status, "text/html; charset=utf-8", []byte(b.String()))
}

// errorPage is a page that only says what went wrong.
type errorPage struct {
	layout
	Status  int
	Message string
}

func (c *Console) fail(g *gin.Context, status int, msg string) {
	c.render(g, status, "error", errorPage{layout: c.layout(g, http.StatusText(status), ""), Status: status, Message: msg})
	g.Abort()
}

// statusOf maps a core error to the status REST answers for it, and the
// message a person sees (the API's own message).
func statusOf(err error) (int, string) {
	if errors.Is(err, context.Canceled) {
		return 499, "the request was cancelled"
	}
	switch core.KindOf(err) {
	case core.KindInvalid:
		return http.StatusBadRequest, err.Error()
	case core.KindNotFound:
		return http.StatusNotFound, err.Error()
	case core.KindConflict, core.KindBusy:
		return http.StatusConflict, err.Error()
	case core.KindUnauthorized:
		return http.StatusUnauthorized, err.Error()
	case core.KindTooLarge:
		return http.StatusRequestEntityTooLarge, err.Error()
	case core.KindUnavailable, core.KindLoading:
		// Loading: the search index is still being filled after a start;
		// the message names the catalog and its progress.
		return http.StatusServiceUnavailable, err.Error()
	}
	return http.StatusInternalServerError, "internal error; the incident is logged"
}

func (c *Console) failErr(g *gin.Context, err error) {
	status, msg := statusOf(err)
	if core.KindOf(err) == core.KindLoading {
		g.Header("Retry-After", "2")
	} else if status >= 500 {
		c.d.Log.Error("console request failed", zap.String("path", g.Request.URL.Path), zap.String("request_id", core.RequestID(g.Request.Context())), zap.Error(err))
	}
	c.fail(g, status, msg)
}

// redirect answers a POST with 303 See Other (post/redirect/get).
func redirect(g *gin.Context, path string) {
	g.Redirect(http.StatusSeeOther, path)
	g.Abort()
}

// baseURL is the service's URL as the browser reached it.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// localPath accepts only a path on this host as a redirect target.
func localPath(p string) string {
	u, err := url.Parse(p)
	if err != nil || u.IsAbs() || u.Host != "" || !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.Contains(p, "\\") {
		return "/"
	}
	return p
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
