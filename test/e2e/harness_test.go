// Package e2e boots the whole fx application on a temporary directory
// against a stand-in of the publisher serving the real exports, and drives
// it over HTTP. Every response is validated against /openapi.yaml.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"go.uber.org/fx"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/climatesearch/climatesearch/adapters/boverket/boverkettest"
	"github.com/climatesearch/climatesearch/cmd/climatesearch/app"
	"github.com/climatesearch/climatesearch/config"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
	"github.com/climatesearch/climatesearch/test/pgtest"
	"github.com/climatesearch/climatesearch/web"
)

// recorder wraps the event port to let tests see what the core published;
// events still reach the real log adapter.
type recorder struct {
	next ports.EventPublisher
	mu   sync.Mutex
	evs  []core.Event
}

func (r *recorder) Publish(ctx context.Context, ev core.Event) error {
	r.mu.Lock()
	r.evs = append(r.evs, ev)
	r.mu.Unlock()
	return r.next.Publish(ctx, ev)
}

func (r *recorder) ofType(t core.EventType) []core.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []core.Event
	for _, e := range r.evs {
		if e.Type == t {
			out = append(out, e)
		}
	}
	return out
}

type env struct {
	t        *testing.T
	URL      string
	Up       *boverkettest.Server
	Events   *recorder
	DataDir  string
	settings map[string]string
	app      *fx.App
	router   routers.Router
	Log      *zap.Logger
	// Extra fx options for the next start (e.g. fx.Populate of a part).
	Extra []fx.Option
	// NoWait makes start return once the server listens, without waiting
	// for the search index to load (tests of the loading state).
	NoWait bool
	// seen holds the log lines (info and up) of the current run.
	seen     *observer.ObservedLogs
	embedder string
}

var (
	exportsOnce sync.Once
	sv0206      []byte
	en0207      []byte
	wbSV, wbEN  []byte
)

// realExports loads the 02.06 sv and 02.07 en exports and workbooks built
// from them, once per test binary.
func realExports(t *testing.T) {
	exportsOnce.Do(func() {
		sv0206 = boverkettest.LoadExport(t, boverkettest.Export0206SV)
		en0207 = boverkettest.LoadExport(t, boverkettest.Export0207EN)
		wbSV = boverkettest.WorkbookFromExport(t, sv0206, "sv")
		wbEN = boverkettest.WorkbookFromExport(t, en0207, "en")
	})
}

// newEnv starts a publisher stand-in serving the real exports and the app.
// settings override the environment (SERVICE_*).
// EnvStore, set to "postgres", runs the suite on PostgreSQL (SERVICE_STORE)
// instead of the embedded badger store; test/suite.sh runs it both ways.
const EnvStore = "CLIMATESEARCH_E2E_STORE"

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func newEnv(t *testing.T, settings map[string]string, extra ...fx.Option) *env {
	t.Helper()
	realExports(t)
	up := boverkettest.NewServer(t)
	up.SetJSON("sv", sv0206)
	up.SetJSON("en", en0207)
	up.SetExcel("sv", wbSV)
	up.SetExcel("en", wbEN)
	e := &env{t: t, Up: up, Extra: extra, DataDir: t.TempDir(), settings: map[string]string{
		"SERVICE_ADDR":            "127.0.0.1:0",
		"SERVICE_UPSTREAM_URL":    up.URL,
		"SERVICE_EXCEL_URL_SV":    up.ExcelURL("sv"),
		"SERVICE_EXCEL_URL_EN":    up.ExcelURL("en"),
		"SERVICE_INGEST_INTERVAL": "0",
		"SERVICE_BOOT_INGEST":     "false",
		"SERVICE_INGEST_TIMEOUT":  "5s",
		"SERVICE_LOG_LEVEL":       "warn",
	}}
	for k, v := range settings {
		e.settings[k] = v
	}
	e.settings["SERVICE_DATA_DIR"] = e.DataDir
	if os.Getenv(EnvStore) == "postgres" {
		// The same suite on the store several replicas share: a fresh
		// database per test (the search index stays under DataDir).
		e.settings["SERVICE_STORE"] = pgtest.Shared(t).NewDB(t)
	}
	e.router = openapiRouter(t)
	e.start()
	return e
}

func init() {
	// The document describes /docs (HTML) and /openapi.yaml (YAML) with
	// string schemas; decode them as text.
	text := func(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
		b, err := io.ReadAll(body)
		return string(b), err
	}
	openapi3filter.RegisterBodyDecoder("text/html", text)
	openapi3filter.RegisterBodyDecoder("application/yaml", text)
}

func openapiRouter(t *testing.T) routers.Router {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(web.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatal(err)
	}
	doc.Servers = nil
	r, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (e *env) start() {
	t := e.t
	t.Helper()
	cfg, err := config.Load(nil, func(k string) (string, bool) { v, ok := e.settings[k]; return v, ok }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// Warnings go to the test log; info lines are watched, so a test starts
	// once the vectors have loaded too (see waitReady).
	obs, seen := observer.New(zap.InfoLevel)
	e.seen, e.embedder = seen, cfg.Embedder
	t.Cleanup(func() { checkNoSecrets(t, seen, e.settings) })
	e.Log = zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel), zaptest.WrapOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core {
		return zapcore.NewTee(c, obs)
	})))
	e.Events = &recorder{}
	var srv *app.Server
	opts := append([]fx.Option{
		fx.Decorate(func(p ports.EventPublisher) ports.EventPublisher { e.Events.next = p; return e.Events }),
		fx.Populate(&srv),
	}, e.Extra...)
	e.app = fx.New(app.Options(cfg, e.Log, opts...))
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := e.app.Start(ctx); err != nil {
		t.Fatal(err)
	}
	e.URL = "http://" + srv.Addr()
	t.Cleanup(e.stop) // stop is a no-op when the test already stopped the app
	if !e.NoWait {
		e.waitReady()
	}
}

// waitReady polls /readyz (each answer checked against /openapi.yaml) until
// it answers 200: the index has loaded in the background after the start,
// so reads answer instead of 503. With an embedder it then waits for the
// vector boot that follows (until then vector=true answers full text and
// says so), so a test's first hybrid search never races it.
func (e *env) waitReady() {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for ; ; time.Sleep(10 * time.Millisecond) {
		r := e.get("/readyz")
		if r.Status == http.StatusOK {
			break
		}
		if r.Status != http.StatusServiceUnavailable || time.Now().After(deadline) {
			e.t.Fatalf("/readyz: %d %s", r.Status, r.Body)
		}
	}
	if e.embedder == "none" {
		return
	}
	for e.seen.FilterMessage("vectors ready").Len()+e.seen.FilterMessage("loading vectors failed; vector search is degraded").Len() == 0 {
		if time.Now().After(deadline) {
			e.t.Fatal("the vector boot did not end within the safety limit")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (e *env) stop() {
	if e.app == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := e.app.Stop(ctx); err != nil {
		e.t.Errorf("stopping the app: %v", err)
	}
	e.app = nil
}

// restart stops the app and starts a new one on the same data directory.
func (e *env) restart() {
	e.t.Helper()
	e.stop()
	e.start()
}

// response is a decoded answer.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r response) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.Body, err)
	}
}

func (r response) errMsg(t *testing.T) string {
	t.Helper()
	var b struct {
		Error string `json:"error"`
	}
	r.json(t, &b)
	if b.Error == "" {
		t.Fatalf("error body without message: %s", r.Body)
	}
	return b.Error
}

// do sends a request and validates request and response against the OpenAPI document.
func (e *env) do(method, path string, body []byte, header map[string]string) response {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, e.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	e.validate(req, body, resp, b)
	return response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

func (e *env) get(path string) response { return e.do(http.MethodGet, path, nil, nil) }

// validate checks a response against the operation the OpenAPI document
// declares for the request: status documented, body matching its schema.
func (e *env) validate(req *http.Request, body []byte, resp *http.Response, b []byte) {
	e.t.Helper()
	if strings.HasPrefix(req.URL.Path, "/docs/") {
		return // Swagger UI's static assets, not part of the API
	}
	vreq := req.Clone(context.Background())
	vreq.URL, _ = url.Parse(req.URL.RequestURI())
	vreq.Host = ""
	route, params, err := e.router.FindRoute(vreq)
	if err != nil {
		if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed {
			return // an undocumented path answered as such
		}
		e.t.Errorf("%s %s: not in /openapi.yaml: %v", req.Method, req.URL.Path, err)
		return
	}
	input := &openapi3filter.RequestValidationInput{
		Request: vreq, PathParams: params, Route: route,
		Options: &openapi3filter.Options{ExcludeRequestBody: true, ExcludeRequestQueryParams: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
	}
	rvi := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: input,
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		Body:                   io.NopCloser(bytes.NewReader(b)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), rvi); err != nil {
		e.t.Errorf("%s %s -> %d does not match /openapi.yaml: %v\nbody: %.400s", req.Method, req.URL.RequestURI(), resp.StatusCode, err, b)
	}
}

// ingest runs an upstream ingest of national now and decodes its result.
func (e *env) ingest() (core.IngestResult, response) {
	e.t.Helper()
	r := e.do(http.MethodPost, "/admin/ingest/run?catalog=national", nil, nil)
	var res core.IngestResult
	if r.Status == http.StatusOK {
		r.json(e.t, &res)
	}
	return res, r
}

func (e *env) mustIngest() core.IngestResult {
	e.t.Helper()
	res, r := e.ingest()
	if r.Status != http.StatusOK {
		e.t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	return res
}

func q(s string) string { return url.QueryEscape(s) }

func contains(s, sub string) bool { return strings.Contains(s, sub) }
