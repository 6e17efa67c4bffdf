package mcpe2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.uber.org/fx"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/climatesearch/climatesearch/cmd/climatesearch/app"
	"github.com/climatesearch/climatesearch/config"
	"github.com/climatesearch/climatesearch/core"
)

// env is the whole app booted in-process (so -race sees the MCP adapter)
// against the publisher stand-in, with the real national catalog loaded and
// a small Danish batch whose first id collides with a national one.
type env struct {
	t   *testing.T
	URL string
	app *fx.App
}

// dkbrBatch makes "6000000000" exist in both catalogs (an ambiguous bare id)
// and gives dkbr a resource to find by its own id.
const dkbrBatch = `{"catalog":"dkbr","version":"BR25","resources":[
 {"id":"6000000000","name":"Spånplade","unit":"kg","a1a3":0.5,"conversions":{"kg/m³":650}},
 {"id":"#G0164","name":"Beton, C30/37","unit":"m³","a1a3":250,"conversions":{"kg/m³":2400}}]}`

func newEnv(t *testing.T, settings map[string]string) *env {
	t.Helper()
	up := publisher(t)
	vals := map[string]string{
		"SERVICE_ADDR":            "127.0.0.1:0",
		"SERVICE_DATA_DIR":        t.TempDir(),
		"SERVICE_UPSTREAM_URL":    up.URL,
		"SERVICE_EXCEL_URL_SV":    up.ExcelURL("sv"),
		"SERVICE_EXCEL_URL_EN":    up.ExcelURL("en"),
		"SERVICE_BOOT_INGEST":     "false",
		"SERVICE_INGEST_INTERVAL": "0",
		"SERVICE_LOG_LEVEL":       "warn",
	}
	for k, v := range settings {
		vals[k] = v
	}
	cfg, err := config.Load(nil, func(k string) (string, bool) { v, ok := vals[k]; return v, ok }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var srv *app.Server
	var vis *core.Visibility
	// Warnings go to the test log; the info line that ends the background
	// vector boot is watched, so the ingest below never races it.
	obs, seen := observer.New(zap.InfoLevel)
	logger := zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel), zaptest.WrapOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core {
		return zapcore.NewTee(c, obs)
	})))
	a := fx.New(app.Options(cfg, logger, fx.Populate(&srv, &vis)))
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, URL: "http://" + srv.Addr(), app: a}
	t.Cleanup(func() {
		if e.app != nil {
			e.stop()
		}
	})
	// The index loads in the background after the start; until then reads
	// and ingests answer 503.
	waitFor(t, "the search index loaded", func() bool { return vis.Readiness().Ready })
	if cfg.Embedder != "none" {
		waitFor(t, "the vector boot", func() bool {
			return seen.FilterMessage("vectors ready").Len()+seen.FilterMessage("loading vectors failed; vector search is degraded").Len() > 0
		})
	}
	if status, body := httpDo(t, http.MethodPost, e.URL+"/admin/ingest/run?catalog=national", "", nil); status != http.StatusOK {
		t.Fatalf("ingest: %d %s", status, body)
	}
	if status, body := httpDo(t, http.MethodPost, e.URL+"/admin/resources", dkbrBatch, nil); status != http.StatusOK {
		t.Fatalf("dkbr batch: %d %s", status, body)
	}
	return e
}

// stop stops the app and fails the test when stopping fails.
func (e *env) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := e.app.Stop(ctx); err != nil {
		e.t.Errorf("stopping the app: %v", err)
	}
	e.app = nil
}

// rest GETs a REST path and returns status and body.
func (e *env) rest(path string) (int, []byte) {
	e.t.Helper()
	return httpDo(e.t, http.MethodGet, e.URL+path, "", nil)
}

// --- MCP clients ------------------------------------------------------------

// conn is a connected, initialized mcp-go client.
type conn struct {
	name string
	cli  *client.Client
}

// Transports the Go tests drive: streamable HTTP negotiating the newest
// protocol the client and server share, streamable HTTP pinned to the
// 2025-11-25 handshake most clients use today, and legacy SSE.
var transports = []string{"streamable", "streamable-2025-11-25", "sse"}

func (e *env) connect(t *testing.T, kind string) *conn {
	t.Helper()
	var (
		cli *client.Client
		err error
	)
	version := ""
	switch kind {
	case "streamable":
		cli, err = client.NewStreamableHttpClient(e.URL + "/mcp")
	case "streamable-2025-11-25":
		cli, err = client.NewStreamableHttpClient(e.URL + "/mcp")
		version = "2025-11-25"
	case "sse":
		cli, err = client.NewSSEMCPClient(e.URL+"/mcp/sse", transport.WithHTTPClient(&http.Client{}))
		version = "2025-06-18"
	default:
		t.Fatalf("unknown transport %q", kind)
	}
	if err != nil {
		t.Fatal(err)
	}
	// The mcp-go client stops dispatching notifications once the context
	// of Initialize ends, so it lives as long as the connection.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	if err := cli.Start(context.Background()); err != nil {
		cancel()
		t.Fatalf("%s: start: %v", kind, err)
	}
	t.Cleanup(func() { cli.Close(); cancel() })
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "climatesearch-tests", Version: "1"}
	init.Params.ProtocolVersion = version
	res, err := cli.Initialize(ctx, init)
	if err != nil {
		t.Fatalf("%s: initialize: %v", kind, err)
	}
	if res.ServerInfo.Name != "climatesearch" || res.Capabilities.Tools == nil || res.Capabilities.Resources == nil || res.Capabilities.Prompts == nil || res.Capabilities.Completions == nil {
		t.Fatalf("%s: initialize answered %+v", kind, res)
	}
	return &conn{name: kind, cli: cli}
}

// call calls a tool; a protocol error fails the test, since every failure
// of a tool must come back as a tool error.
func (c *conn) call(t *testing.T, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	res, err := c.cli.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s: %s %v: protocol error %v", c.name, tool, args, err)
	}
	return res
}

func (c *conn) tools(t *testing.T) map[string]mcp.Tool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	list, err := c.cli.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("%s: tools/list: %v", c.name, err)
	}
	out := map[string]mcp.Tool{}
	for _, tl := range list.Tools {
		out[tl.Name] = tl
	}
	return out
}

func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// structured returns a successful result's structuredContent as JSON.
func structured(t *testing.T, r *mcp.CallToolResult) []byte {
	t.Helper()
	if r.IsError {
		t.Fatalf("tool error: %s", resultText(r))
	}
	if len(r.RawStructuredContent) > 0 {
		return r.RawStructuredContent
	}
	if r.StructuredContent == nil {
		t.Fatalf("no structuredContent; text: %s", resultText(r))
	}
	b, err := json.Marshal(r.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decode reads JSON keeping numbers as written, for exact comparisons.
func decode(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding %.300s: %v", b, err)
	}
	// took_ms is how long one computation took: two computations of the
	// same answer differ in it and in nothing else.
	if m, ok := v.(map[string]any); ok {
		delete(m, "took_ms")
	}
	return v
}

// sameJSON fails unless a and b hold the same JSON value.
func sameJSON(t *testing.T, what string, rest, mcpAnswer []byte) {
	t.Helper()
	if a, b := decode(t, rest), decode(t, mcpAnswer); !reflect.DeepEqual(a, b) {
		t.Errorf("%s: the MCP answer differs from REST at %s", what, firstDiff("", a, b))
	}
}

// equalsREST asks REST, then MCP, then REST again, and requires the MCP
// answer to equal REST's. The full-text index settles in the background
// for a moment after an ingest (deeper BM25 ranks can shift once), so a
// comparison during which REST itself changed is made again; an MCP answer
// that differs from a stable REST answer fails at once.
func (e *env) equalsREST(t *testing.T, what, restPath string, ask func() []byte) []byte {
	t.Helper()
	for attempt := 0; ; attempt++ {
		code, before := e.rest(restPath)
		if code != http.StatusOK {
			t.Fatalf("%s: REST %s: %d %s", what, restPath, code, before)
		}
		got := ask()
		_, after := e.rest(restPath)
		if reflect.DeepEqual(decode(t, before), decode(t, after)) {
			sameJSON(t, what, before, got)
			return got
		}
		if attempt == 50 {
			t.Fatalf("%s: REST never answered the same twice in a row", what)
		}
	}
}

// firstDiff names the first place two decoded JSON values differ.
func firstDiff(path string, a, b any) string {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: object vs %T", path, b)
		}
		keys := map[string]bool{}
		for k := range av {
			keys[k] = true
		}
		for k := range bv {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			if !reflect.DeepEqual(av[k], bv[k]) {
				return firstDiff(path+"."+k, av[k], bv[k])
			}
		}
	case []any:
		bv, ok := b.([]any)
		if !ok {
			return fmt.Sprintf("%s: array vs %T", path, b)
		}
		for i := range min(len(av), len(bv)) {
			if !reflect.DeepEqual(av[i], bv[i]) {
				return firstDiff(fmt.Sprintf("%s[%d]", path, i), av[i], bv[i])
			}
		}
		return fmt.Sprintf("%s: %d vs %d items", path, len(av), len(bv))
	}
	return fmt.Sprintf("%s: REST %v, MCP %v", path, a, b)
}

// outputSchemas compiles every tool's outputSchema.
func outputSchemas(t *testing.T, tools map[string]mcp.Tool) map[string]*jsonschema.Schema {
	t.Helper()
	out := map[string]*jsonschema.Schema{}
	for name, tl := range tools {
		raw := tl.RawOutputSchema
		if raw == nil {
			b, err := json.Marshal(tl.OutputSchema)
			if err != nil {
				t.Fatal(err)
			}
			raw = b
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s outputSchema: %v", name, err)
		}
		c := jsonschema.NewCompiler()
		url := "mem://" + name + ".json"
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
		s, err := c.Compile(url)
		if err != nil {
			t.Fatalf("%s outputSchema does not compile: %v", name, err)
		}
		out[name] = s
	}
	return out
}

func conforms(t *testing.T, s *jsonschema.Schema, tool string, b []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("%s structuredContent does not match its outputSchema: %v\n%.600s", tool, err, b)
	}
}

// rerankStub is a /rerank server (Cohere wire format) whose scores favour
// short documents: deterministic, and a different order than retrieval's.
func rerankStub(t *testing.T) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Documents []string `json:"documents"`
		}
		if r.URL.Path != "/rerank" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		type res struct {
			Index int     `json:"index"`
			Score float64 `json:"relevance_score"`
		}
		out := struct {
			Results []res `json:"results"`
		}{}
		for i, d := range req.Documents {
			out.Results = append(out.Results, res{i, 1 / float64(1+len(d))})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(s.Close)
	return s
}

// waitFor polls cond until it holds, within the safety limit.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(patience); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s never happened within the safety limit", what)
		}
	}
}
