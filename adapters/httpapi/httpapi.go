// Package httpapi is the REST driver adapter: it turns HTTP requests into
// calls of the core's driver ports and their answers into JSON. It holds no
// business rules beyond parsing parameters.
package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// MaxBatchBody bounds the JSON body of POST /admin/resources.
const MaxBatchBody = 8 << 20

// batchItemBytes is about the fewest bytes of JSON an item of a batch
// takes (an id, a name, a unit and a value): a body's length over it
// sizes the items' slice before decoding. Smaller items only make the
// decoder grow it, as it did before.
const batchItemBytes = 256

// Deps are the ports and assets the API serves.
type Deps struct {
	Search     ports.Searcher
	Resources  ports.Resources
	Compare    ports.Comparer
	Catalogs   ports.CatalogGuide
	Ingest     ports.Ingester
	Files      ports.FileIngester
	Webhooks   ports.Webhooks
	MaxUpload  int64
	OpenAPI    []byte
	SwaggerUI  fs.FS
	AdminToken string
	Log        *zap.Logger
	// Generations, when set, lets answers of reads be kept until the next
	// write becomes visible (answers.go).
	Generations ports.Generations
	// Metrics records each request (route template, method, status,
	// duration); nil records nothing.
	Metrics ports.Metrics
	// Access, when set, writes the access lines in place of Log, and
	// decides whether to (the level): the binary's JSON log encodes them
	// itself, the same text as zap's at a fifth of its cost
	// (cmd/climatesearch/app/accesslog.go). Nil: through Log at info.
	Access func(AccessLine)
	// AdminTimeout, when positive, bounds an admin ingest (its upload,
	// its apply and its answer) in place of the server's read and write
	// timeouts; see long.
	AdminTimeout time.Duration
}

// AccessLine is what the access log says of one request: never the query
// (it may carry a key), never a header.
type AccessLine struct {
	Method, Route, Path string
	Status              int
	Bytes               int64
	Took                time.Duration
	Client, RequestID   string
}

// API is the gin engine with the routes of the specification.
type API struct {
	d       Deps
	engine  *gin.Engine
	answers *answers // nil: nothing is kept
	metrics ports.Metrics
	handler http.Handler // the engine inside Observe
	access  *zap.Logger  // d.Log without the caller, for the access lines
	x       extras       // HEAD, compression, validators (head.go, compress.go, cache.go)
}

// New builds the handler.
func New(d Deps) *API {
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.HandleMethodNotAllowed = true
	e.ContextWithFallback = true
	a := &API{d: d, engine: e, metrics: ports.MetricsOrNone(d.Metrics), access: accessLogger(d.Log)}
	a.handler = a.Observe(e)
	if d.Generations != nil {
		a.answers = newAnswers(d.Generations)
	}
	e.Use(a.route, a.head, a.compress, a.recovery)
	e.NoRoute(func(c *gin.Context) {
		writeError(c, http.StatusNotFound, "no route "+c.Request.Method+" "+c.Request.URL.Path+"; the API is described at /docs")
	})
	e.NoMethod(func(c *gin.Context) {
		writeError(c, http.StatusMethodNotAllowed, "method "+c.Request.Method+" is not allowed on "+c.Request.URL.Path)
	})

	e.GET("/healthz", a.health)
	e.GET("/readyz", a.ready)
	e.GET("/openapi.yaml", a.static, a.openapi)
	e.GET("/docs", a.static, a.docs)
	e.GET("/docs/*file", a.static, a.docs)

	api := e.Group("/api", a.validate)
	api.GET("/search", a.kept, a.search)
	api.GET("/resources", a.kept, a.list)
	api.GET("/resources/compare", a.kept, a.compare)
	api.GET("/resources/:id", a.kept, a.get)
	api.GET("/resources/:id/origin", a.origin)
	api.GET("/resources/:id/alternatives", a.kept, a.alternatives)
	api.GET("/catalogs", a.catalogs)

	admin := e.Group("/admin", a.adminGuard)
	admin.POST("/ingest/run", a.long, a.ingestRun)
	admin.POST("/resources", a.long, a.batch)
	admin.POST("/ingest/preview", a.long, a.ingestPreview)
	admin.POST("/ingest/file", a.long, a.ingestFile)
	admin.GET("/webhooks", a.listWebhooks)
	admin.POST("/webhooks", a.createWebhook)
	admin.GET("/webhooks/:id", a.getWebhook)
	admin.PATCH("/webhooks/:id", a.updateWebhook)
	admin.DELETE("/webhooks/:id", a.deleteWebhook)
	admin.POST("/webhooks/:id/test", a.testWebhook)
	admin.GET("/webhooks/:id/deliveries", a.webhookDeliveries)
	admin.GET("/events", a.events)
	return a
}

// Engine returns the gin engine so other driver adapters (MCP, console) can
// mount their routes on the same server.
func (a *API) Engine() *gin.Engine { return a.engine }

// ServeHTTP makes the API an http.Handler: the engine inside Observe
// (request id, access log, metrics).
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.handler.ServeHTTP(w, r) }

// errorBody is the specification's Error object; Catalogs names the
// candidates of an ambiguous bare id.
type errorBody struct {
	Error    string             `json:"error"`
	Catalogs []core.CatalogID   `json:"catalogs,omitempty"`
	Problems []core.FileProblem `json:"problems,omitempty"`
	// RequestID names the request in the logs (5xx answers).
	RequestID string `json:"request_id,omitempty"`
}

func writeError(c *gin.Context, status int, msg string) {
	body := errorBody{Error: msg}
	if status >= 500 {
		body.RequestID = requestIDOf(c)
	}
	c.AbortWithStatusJSON(status, body)
}

// RetryLoading is the Retry-After, in seconds, of the answers given while
// the search index is still loading after a start.
const RetryLoading = "2"

// fail maps a core error to its status.
func (a *API) fail(c *gin.Context, err error) {
	var ce *core.Error
	errors.As(err, &ce)
	status := http.StatusInternalServerError
	kind := core.KindOf(err)
	switch kind {
	case core.KindInvalid:
		status = http.StatusBadRequest
	case core.KindNotFound:
		status = http.StatusNotFound
	case core.KindConflict, core.KindBusy:
		status = http.StatusConflict
	case core.KindUnauthorized:
		status = http.StatusUnauthorized
	case core.KindTooLarge:
		status = http.StatusRequestEntityTooLarge
	case core.KindUnavailable:
		status = http.StatusServiceUnavailable
		if strings.HasPrefix(c.Request.URL.Path, "/admin/ingest/run") {
			status = http.StatusBadGateway // the publisher, not this service, failed
		}
	case core.KindLoading:
		// A start, not an outage: the answer would be incomplete, so the
		// client is told when to ask again.
		status = http.StatusServiceUnavailable
		c.Header("Retry-After", RetryLoading)
	}
	body := errorBody{Error: err.Error()}
	if ce != nil {
		body.Catalogs, body.Problems = ce.Candidates, ce.Problems
	}
	if c.Request.Context().Err() != nil {
		// The client went away; the failure is theirs, not an outage.
		a.log(c).Debug("client gone", zap.String("path", c.Request.URL.Path), zap.Error(err))
		c.AbortWithStatus(499)
		return
	}
	if status >= 500 && kind != core.KindLoading {
		a.log(c).Error("request failed", zap.String("path", c.Request.URL.Path), zap.Int("status", status), zap.Error(err))
		if status == http.StatusInternalServerError {
			body.Error = "internal error; the incident is logged"
		}
	}
	if status >= 500 {
		body.RequestID = requestIDOf(c)
	}
	c.AbortWithStatusJSON(status, body)
}

func (a *API) recovery(c *gin.Context) {
	defer func() {
		if p := recover(); p != nil {
			a.log(c).Error("panic serving request", zap.Any("panic", p), zap.String("path", c.Request.URL.Path), zap.Stack("stack"))
			writeError(c, http.StatusInternalServerError, "internal error; the incident is logged")
		}
	}()
	c.Next()
}

// long gives an admin ingest AdminTimeout from now to read its body and to
// write its answer, in place of the server's bounds on every request (the
// body within 60 s, the answer within 10 minutes): a file near the upload
// limit takes minutes to arrive over a slow link, and applying a million
// rows takes minutes more (docs/PERFORMANCE.md §12x), after which the
// server would cut the answer of a change it stored. It runs after the
// admin guard: with an admin token set only an operator's request gets the
// longer bounds (without one, /admin is open to every client anyway).
func (a *API) long(c *gin.Context) {
	if t := a.d.AdminTimeout; t > 0 {
		rc := http.NewResponseController(c.Writer)
		deadline := time.Now().Add(t)
		// A writer that does not reach a connection (a test's recorder)
		// keeps the server's bounds.
		_ = rc.SetReadDeadline(deadline)
		_ = rc.SetWriteDeadline(deadline)
	}
	c.Next()
}

func (a *API) adminGuard(c *gin.Context) {
	if a.d.AdminToken == "" {
		return
	}
	got := sha256.Sum256([]byte(c.GetHeader("X-Admin-Token")))
	want := sha256.Sum256([]byte(a.d.AdminToken))
	// Hashing first makes the comparison constant-time in the token length too.
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		writeError(c, http.StatusUnauthorized, "admin token missing or wrong: send header X-Admin-Token with the value of SERVICE_ADMIN_TOKEN")
	}
}

func (a *API) health(c *gin.Context) {
	h := a.d.Resources.Health(c)
	status := http.StatusOK
	if h.Status != "ok" {
		status = http.StatusServiceUnavailable
	}
	c.JSON(status, h)
}

// ready is the readiness probe: 200 once every catalog is loaded into the
// search index, 503 (with what is still loading and how far) before.
// /healthz stays the liveness probe: it answers 200 during the load.
func (a *API) ready(c *gin.Context) {
	r := a.d.Resources.Ready(c)
	status := http.StatusOK
	if !r.Ready {
		status = http.StatusServiceUnavailable
		c.Header("Retry-After", RetryLoading)
	}
	c.JSON(status, r)
}

func (a *API) openapi(c *gin.Context) {
	c.Data(http.StatusOK, "application/yaml", a.d.OpenAPI)
}

func (a *API) docs(c *gin.Context) {
	name := strings.TrimPrefix(c.Param("file"), "/")
	if name == "" {
		name = "index.html"
	}
	b, err := fs.ReadFile(a.d.SwaggerUI, name)
	if err != nil {
		writeError(c, http.StatusNotFound, "no such documentation file: "+name)
		return
	}
	ct := "application/octet-stream"
	switch {
	case strings.HasSuffix(name, ".html"):
		ct = "text/html; charset=utf-8"
	case strings.HasSuffix(name, ".css"):
		ct = "text/css; charset=utf-8"
	case strings.HasSuffix(name, ".js"):
		ct = "text/javascript; charset=utf-8"
	case strings.HasSuffix(name, ".png"):
		ct = "image/png"
	}
	c.Header("Cache-Control", "public, max-age=3600")
	c.Data(http.StatusOK, ct, b)
}

// knownParams lists the query parameters each route accepts; anything else
// is refused so a typo (`lnag=en`) does not silently do the wrong thing.
func checkParams(c *gin.Context, allowed ...string) bool {
	for k := range c.Request.URL.Query() {
		ok := false
		for _, a := range allowed {
			if k == a {
				ok = true
				break
			}
		}
		if !ok {
			writeError(c, http.StatusBadRequest, "unknown query parameter "+strconv.Quote(k)+"; accepted: "+strings.Join(allowed, ", "))
			return false
		}
	}
	return true
}

func parseLang(c *gin.Context) (core.Lang, bool) {
	l, err := core.ParseLang(c.Query("lang"))
	if err != nil {
		writeError(c, http.StatusBadRequest, err.Error())
		return "", false
	}
	return l, true
}

func parseCatalogs(c *gin.Context) ([]core.CatalogID, bool) {
	cs, err := core.ParseCatalogList(c.Query("databases"))
	if err != nil {
		writeError(c, http.StatusBadRequest, "databases: "+err.Error())
		return nil, false
	}
	return cs, true
}

func parseBool(c *gin.Context, name string) (bool, bool) {
	v := c.Query(name)
	if v == "" {
		return false, true
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		writeError(c, http.StatusBadRequest, name+" must be true or false, got "+strconv.Quote(v))
		return false, false
	}
	return b, true
}

func (a *API) search(c *gin.Context) {
	if !checkParams(c, append([]string{"q", "lang", "vector", "rerank", "databases", "limit", "offset", "explain", "highlight"}, refineParams...)...) {
		return
	}
	lang, ok := parseLang(c)
	if !ok {
		return
	}
	cats, ok := parseCatalogs(c)
	if !ok {
		return
	}
	refine, ok := parseRefine(c)
	if !ok {
		return
	}
	req := core.SearchRequest{Query: c.Query("q"), Lang: lang, Catalogs: cats, Refine: refine}
	for name, dst := range map[string]*bool{"vector": &req.Vector, "rerank": &req.Rerank, "explain": &req.Explain, "highlight": &req.Highlight} {
		if *dst, ok = parseBool(c, name); !ok {
			return
		}
	}
	if req.Limit, ok = parseInt(c, "limit", 1, core.MaxLimit); !ok {
		return
	}
	if req.Offset, ok = parseInt(c, "offset", 0, core.MaxOffset); !ok {
		return
	}
	resp, err := a.d.Search.Search(c, req)
	if err != nil {
		a.fail(c, err)
		return
	}
	if !req.Vector && !req.Rerank {
		keepable(c)
	}
	c.JSON(http.StatusOK, resp)
}

// parseInt reads an optional integer parameter within [lo, hi]; absent is 0.
func parseInt(c *gin.Context, name string, lo, hi int) (int, bool) {
	v := c.Query(name)
	if v == "" {
		return 0, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		writeError(c, http.StatusBadRequest, name+" must be an integer between "+strconv.Itoa(lo)+" and "+strconv.Itoa(hi))
		return 0, false
	}
	return n, true
}

func (a *API) list(c *gin.Context) {
	if !checkParams(c, append([]string{"lang", "databases"}, refineParams...)...) {
		return
	}
	lang, ok := parseLang(c)
	if !ok {
		return
	}
	cats, ok := parseCatalogs(c)
	if !ok {
		return
	}
	refine, ok := parseRefine(c)
	if !ok {
		return
	}
	resp, err := a.d.Resources.List(c, core.ListRequest{Catalogs: cats, Lang: lang, Refine: refine})
	if err != nil {
		a.fail(c, err)
		return
	}
	keepable(c)
	c.JSON(http.StatusOK, resp)
}

func (a *API) get(c *gin.Context) {
	if !checkParams(c, "lang") {
		return
	}
	lang, ok := parseLang(c)
	if !ok {
		return
	}
	r, err := a.d.Resources.Get(c, c.Param("id"), lang)
	if err != nil {
		a.fail(c, err)
		return
	}
	keepable(c)
	c.JSON(http.StatusOK, r)
}

func (a *API) origin(c *gin.Context) {
	if !checkParams(c) {
		return
	}
	u, err := a.d.Resources.Origin(c, c.Param("id"))
	if err != nil {
		a.fail(c, err)
		return
	}
	c.Redirect(http.StatusFound, u)
}

func (a *API) compare(c *gin.Context) {
	if !checkParams(c, "a", "b", "unit", "impact", "lang") {
		return
	}
	lang, ok := parseLang(c)
	if !ok {
		return
	}
	impact, ok := parseImpact(c)
	if !ok {
		return
	}
	cmp, err := a.d.Compare.Compare(c, core.CompareRequest{A: c.Query("a"), B: c.Query("b"), Unit: c.Query("unit"), Impact: impact, Lang: lang})
	if err != nil {
		a.fail(c, err)
		return
	}
	keepable(c)
	c.JSON(http.StatusOK, cmp)
}

func (a *API) ingestRun(c *gin.Context) {
	if !checkParams(c, "catalog") {
		return
	}
	if c.Query("catalog") == "" {
		writeError(c, http.StatusBadRequest, "catalog is required, e.g. ?catalog=national")
		return
	}
	cat, err := core.ParseCatalog(c.Query("catalog"))
	if err != nil {
		writeError(c, http.StatusBadRequest, err.Error())
		return
	}
	res, err := a.d.Ingest.RunUpstream(c, cat)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}

func (a *API) batch(c *gin.Context) {
	if !checkParams(c) {
		return
	}
	if ct := c.ContentType(); ct != "application/json" {
		writeError(c, http.StatusUnsupportedMediaType, "send the ResourceBatch as application/json, got "+strconv.Quote(ct))
		return
	}
	body, err := readBody(c, MaxBatchBody)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(c, http.StatusRequestEntityTooLarge, "body exceeds "+strconv.Itoa(MaxBatchBody>>20)+" MiB; split the batch")
			return
		}
		writeError(c, http.StatusBadRequest, "body is not a valid ResourceBatch: "+err.Error())
		return
	}
	b, err := decodeBatch(body)
	if errors.Is(err, errTrailing) {
		writeError(c, http.StatusBadRequest, err.Error())
		return
	}
	if err != nil {
		writeError(c, http.StatusBadRequest, "body is not a valid ResourceBatch: "+err.Error())
		return
	}
	res, err := a.d.Ingest.ApplyBatch(c, b)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}
