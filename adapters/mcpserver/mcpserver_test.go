package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/climatesearch/climatesearch/core"
)

// --- Fakes of the driver ports ---

type fakeSearch struct {
	mu   sync.Mutex
	got  []core.SearchRequest
	resp core.SearchResponse
	err  error
}

func (f *fakeSearch) Search(_ context.Context, req core.SearchRequest) (core.SearchResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, req)
	if f.err != nil {
		return core.SearchResponse{}, f.err
	}
	r := f.resp
	r.Query, r.Lang = req.Query, req.Lang
	return r, nil
}

func (f *fakeSearch) last(t *testing.T) core.SearchRequest {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.got) == 0 {
		t.Fatal("the searcher was not called")
	}
	return f.got[len(f.got)-1]
}

type fakeResources struct {
	gotRef  string
	gotLang core.Lang
	err     error
}

func (f *fakeResources) Get(_ context.Context, ref string, lang core.Lang) (core.Resource, error) {
	f.gotRef, f.gotLang = ref, lang
	if f.err != nil {
		return core.Resource{}, f.err
	}
	r := particleBoard()
	r.Localize(lang)
	return r, nil
}

func (f *fakeResources) List(context.Context, core.ListRequest) (core.ListResponse, error) {
	return core.ListResponse{}, errors.New("not used")
}
func (f *fakeResources) Origin(context.Context, string) (string, error) {
	return "", errors.New("not used")
}
func (f *fakeResources) Health(context.Context) core.Health   { return core.Health{Status: "ok"} }
func (f *fakeResources) Ready(context.Context) core.Readiness { return core.Readiness{Ready: true} }

type fakeCompare struct {
	got    core.CompareRequest
	gotAlt core.AlternativesRequest
	err    error
}

func (f *fakeCompare) Alternatives(_ context.Context, req core.AlternativesRequest) (core.Alternatives, error) {
	f.gotAlt = req
	if f.err != nil {
		return core.Alternatives{}, f.err
	}
	r := particleBoard()
	return core.Alternatives{Source: r.Source, Resource: r, Impact: core.ImpactTypical, Unit: r.Unit, Alternatives: []core.Alternative{}}, nil
}

func (f *fakeCompare) Compare(_ context.Context, req core.CompareRequest) (core.Comparison, error) {
	f.got = req
	if f.err != nil {
		return core.Comparison{}, f.err
	}
	a, b := particleBoard(), particleBoard()
	b.ID, b.Name = "6000000168", "Limträ"
	return core.Comparison{Source: core.SourceFor([]core.CatalogID{core.National}), A: a, B: b, Unit: "m³", Impact: req.Impact,
		ValueA: 273, ValueB: 46.004, DeltaA1A3: 226.996, LowerImpactID: b.ID}, nil
}

func particleBoard() core.Resource {
	return core.Resource{
		ID: "6000000000", Catalog: core.National, NameSV: "Spånskiva", NameEN: "Particle board",
		A1A3: core.F(0.39), A1A3Conservative: core.F(0.488), A4: core.F(0.0629), A51: core.F(0.055),
		GWPUnit: "kg CO2 eq./kg", Unit: "kg", Conversions: map[string]float64{"kg/m³": 700},
		Category: "Byggskivor", CategoryCode: "10", Version: "02.07.000", Source: core.SourceNational,
		Origin: "https://klimatdatabasen.boverket.se/detaljer/10/6000000000",
	}
}

type fixture struct {
	srv   *Server
	s     *fakeSearch
	r     *fakeResources
	c     *fakeCompare
	logs  *observer.ObservedLogs
	cli   *client.Client
	tools map[string]mcp.Tool
}

func newFixture(t *testing.T, rerank bool) *fixture {
	t.Helper()
	obs, logs := observer.New(zap.InfoLevel)
	hit := sampleResponse()
	f := &fixture{
		s:    &fakeSearch{resp: hit},
		r:    &fakeResources{},
		c:    &fakeCompare{},
		logs: logs,
	}
	f.srv = New(Deps{Search: f.s, Resources: f.r, Compare: f.c, Rerank: rerank, Log: zap.New(obs)})
	cli, err := client.NewInProcessClient(f.srv.MCPServer())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := cli.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "unit", Version: "1"}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := cli.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	f.cli = cli
	list, err := cli.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	f.tools = map[string]mcp.Tool{}
	for _, tl := range list.Tools {
		f.tools[tl.Name] = tl
	}
	return f
}

func sampleResponse() core.SearchResponse {
	r := particleBoard()
	r.Localize(core.Swedish)
	return core.SearchResponse{Source: core.SourceFor(core.Catalogs), Results: []core.Hit{{
		Resource: r, Lang: core.Swedish, Score: 0.03, MatchSource: core.MatchBoth, Details: "/api/resources/national:6000000000",
	}}}
}

// call calls a tool with raw JSON arguments; a protocol error fails the test.
func (f *fixture) call(t *testing.T, name, argsJSON string) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	if argsJSON != "" {
		req.Params.Arguments = json.RawMessage(argsJSON)
	}
	res, err := f.cli.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s %s: protocol error %v (tool failures must be tool errors)", name, argsJSON, err)
	}
	return res
}

func text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// validateOutput checks structured content against the tool's outputSchema.
func (f *fixture) validateOutput(t *testing.T, name string, r *mcp.CallToolResult) {
	t.Helper()
	raw, err := json.Marshal(f.tools[name].OutputSchema)
	if f.tools[name].RawOutputSchema != nil {
		raw = f.tools[name].RawOutputSchema
	}
	if err != nil || len(raw) == 0 {
		t.Fatalf("%s has no output schema", name)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem://out.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("mem://out.json")
	if err != nil {
		t.Fatalf("%s output schema does not compile: %v", name, err)
	}
	b, err := json.Marshal(r.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(v); err != nil {
		t.Fatalf("%s structuredContent does not match its outputSchema: %v\n%s", name, err, b)
	}
}

func TestToolsAreDeclaredForAgents(t *testing.T) {
	f := newFixture(t, false)
	if len(f.tools) != 5 {
		t.Fatalf("tools: %v", f.tools)
	}
	for name, required := range map[string][]string{ToolSearch: {"query"}, ToolDetails: {"id"}, ToolCompare: {"a", "b"}, ToolAlternatives: {"id"}, ToolCatalogs: nil} {
		tl, ok := f.tools[name]
		if !ok {
			t.Fatalf("%s missing", name)
		}
		a := tl.Annotations
		if a.ReadOnlyHint == nil || !*a.ReadOnlyHint || a.IdempotentHint == nil || !*a.IdempotentHint ||
			a.DestructiveHint == nil || *a.DestructiveHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s annotations %+v", name, a)
		}
		if tl.Description == "" || tl.Title == "" {
			t.Errorf("%s lacks a title or description", name)
		}
		var in struct {
			Required             []string                  `json:"required"`
			Properties           map[string]map[string]any `json:"properties"`
			AdditionalProperties *bool                     `json:"additionalProperties"`
		}
		b, _ := json.Marshal(tl.InputSchema)
		if tl.RawInputSchema != nil {
			b = tl.RawInputSchema
		}
		if err := json.Unmarshal(b, &in); err != nil {
			t.Fatal(err)
		}
		if strings.Join(in.Required, ",") != strings.Join(required, ",") || in.AdditionalProperties == nil || *in.AdditionalProperties {
			t.Errorf("%s input schema: required %v, additionalProperties %v", name, in.Required, in.AdditionalProperties)
		}
		for p, s := range in.Properties {
			if d, _ := s["description"].(string); len(d) < 20 {
				t.Errorf("%s.%s has no description an agent can act on: %q", name, p, d)
			}
		}
	}
}

func TestSearchAsksTheCoreLikeREST(t *testing.T) {
	f := newFixture(t, false)
	r := f.call(t, ToolSearch, `{"query":"  spånskiva "}`)
	if r.IsError {
		t.Fatal(text(r))
	}
	got := f.s.last(t)
	if got.Query != "  spånskiva " || got.Lang != core.Swedish || !got.Vector || got.Rerank || got.Limit != 10 ||
		len(got.Catalogs) != 2 || got.Offset != 0 || got.Explain || got.Category != "" || got.Unit != "" {
		t.Fatalf("request %+v", got)
	}
	f.validateOutput(t, ToolSearch, r)
	if tx := text(r); !strings.Contains(tx, "Spånskiva [national:6000000000]") || !strings.Contains(tx, "Source: "+core.SourceAll) ||
		!strings.Contains(tx, "A1-A3 typical 0.39 kg CO2 eq./kg") || !strings.Contains(tx, "https://klimatdatabasen.boverket.se/detaljer/10/6000000000") {
		t.Fatalf("text rendering:\n%s", tx)
	}

	f.call(t, ToolSearch, `{"query":"glulam","lang":"en","databases":["br25","National","dkbr"],"limit":50}`)
	got = f.s.last(t)
	if got.Lang != core.English || got.Limit != 50 || len(got.Catalogs) != 2 || got.Catalogs[0] != core.DKBR || got.Catalogs[1] != core.National {
		t.Fatalf("request %+v", got)
	}
	f.call(t, ToolSearch, `{"query":"x","databases":"national","limit":3.0}`)
	if got = f.s.last(t); len(got.Catalogs) != 1 || got.Catalogs[0] != core.National || got.Limit != 3 {
		t.Fatalf("databases as one string, limit 3.0: %+v", got)
	}
	f.call(t, ToolSearch, `{"query":"x","databases":[],"lang":null,"limit":null}`)
	if got = f.s.last(t); len(got.Catalogs) != 2 || got.Lang != core.Swedish || got.Limit != 10 {
		t.Fatalf("empty and null arguments mean the defaults: %+v", got)
	}
}

func TestSearchRerankFollowsTheProcess(t *testing.T) {
	f := newFixture(t, true)
	f.call(t, ToolSearch, `{"query":"betong"}`)
	if got := f.s.last(t); !got.Rerank || !got.Vector {
		t.Fatalf("with a reranker configured MCP must rerank: %+v", got)
	}
}

func TestInvalidArgumentsAreToolErrors(t *testing.T) {
	f := newFixture(t, false)
	for _, tc := range []struct{ tool, args, want string }{
		{ToolSearch, ``, "query is required"},
		{ToolSearch, `{}`, "query is required"},
		{ToolSearch, `{"query":"   "}`, "query is required"},
		{ToolSearch, `{"query":"` + strings.Repeat("å", 257) + `"}`, "query is 257 characters long; the limit is 256"},
		{ToolSearch, `{"query":["a"]}`, "query must be a string"},
		{ToolSearch, `{"query":"x","lang":"de"}`, `unknown lang "de": use sv or en`},
		{ToolSearch, `{"query":"x","databases":["se"]}`, `databases: unknown catalog "se": use national, dkbr or br25`},
		{ToolSearch, `{"query":"x","databases":[1]}`, "databases must be an array of strings"},
		{ToolSearch, `{"query":"x","limit":0}`, "limit must be an integer between 1 and 50"},
		{ToolSearch, `{"query":"x","limit":51}`, "limit must be an integer between 1 and 50"},
		{ToolSearch, `{"query":"x","limit":2.5}`, "limit must be an integer between 1 and 50"},
		{ToolSearch, `{"query":"x","limit":"5"}`, "limit must be an integer between 1 and 50"},
		{ToolSearch, `{"query":"x","q":"y","vector":true}`, `unknown argument "q", "vector"; this tool accepts query, lang, databases, limit`},
		{ToolSearch, `[1,2]`, "arguments must be a JSON object"},
		{ToolDetails, `{}`, "id is required"},
		{ToolDetails, `{"id":"national:1","lang":"fr"}`, "unknown lang"},
		{ToolDetails, `{"id":"national:1","extra":1}`, `unknown argument "extra"`},
		{ToolCompare, `{"a":"1"}`, "b is required"},
		{ToolCompare, `{"b":"1"}`, "a is required"},
		{ToolCompare, `{"a":"1","b":"2","impact":"a1a3"}`, "unknown impact \"a1a3\": use typical, conservative, a4 or a5_1"},
		{ToolCompare, `{"a":"1","b":"2","unit":5}`, "unit must be a string"},
	} {
		r := f.call(t, tc.tool, tc.args)
		if !r.IsError || !strings.Contains(text(r), tc.want) || !strings.Contains(text(r), "call again") && !strings.Contains(text(r), "Call again") {
			t.Errorf("%s %s: isError %v, %q (want %q and what to do next)", tc.tool, tc.args, r.IsError, text(r), tc.want)
		}
		if r.StructuredContent != nil {
			t.Errorf("%s %s: an error carries structuredContent %v", tc.tool, tc.args, r.StructuredContent)
		}
	}
}

func TestNumericIdsAreTakenDigitForDigit(t *testing.T) {
	f := newFixture(t, false)
	r := f.call(t, ToolDetails, `{"id":6000000000,"lang":"en"}`)
	if r.IsError || f.r.gotRef != "6000000000" || f.r.gotLang != core.English {
		t.Fatalf("%v %q %q", r.IsError, f.r.gotRef, text(r))
	}
	f.validateOutput(t, ToolDetails, r)
	if tx := text(r); !strings.HasPrefix(tx, "Particle board [national:6000000000] (Spånskiva)") || !strings.Contains(tx, "Conversions: kg/m³ 700") ||
		!strings.Contains(tx, "Source: Boverket Klimatdatabas (Boverket, Sweden). climatesearch is not affiliated") {
		t.Fatalf("text:\n%s", tx)
	}
	r = f.call(t, ToolCompare, `{"a":6000000000,"b":"national:6000000168","unit":"m3","impact":"conservative","lang":"en"}`)
	if r.IsError || f.c.got.A != "6000000000" || f.c.got.B != "national:6000000168" || f.c.got.Unit != "m3" || f.c.got.Impact != core.ImpactConservative || f.c.got.Lang != core.English {
		t.Fatalf("%+v %s", f.c.got, text(r))
	}
	f.validateOutput(t, ToolCompare, r)
	if tx := text(r); !strings.Contains(tx, "a - b = 226.996 kg CO2e per m³") || !strings.Contains(tx, "b (national:6000000168) has the lower impact") {
		t.Fatalf("text:\n%s", tx)
	}
}

func TestCoreErrorsBecomeActionableToolErrors(t *testing.T) {
	f := newFixture(t, false)
	conflict := &core.Error{Kind: core.KindConflict, Msg: `id "7" exists in catalogs national and dkbr: ask for one of national:7, dkbr:7`,
		Candidates: []core.CatalogID{core.National, core.DKBR}}
	loading := &core.Error{Kind: core.KindLoading, Msg: "the search index is still loading after a start (national: 3 of 9 resources indexed); retry in a few seconds"}
	for _, tc := range []struct {
		tool, args string
		err        error
		want       []string
		logged     bool
	}{
		{ToolDetails, `{"id":"999"}`, core.NotFoundf(`no resource "999" in any catalog`), []string{`no resource "999"`, "search_climate_data"}, false},
		{ToolDetails, `{"id":"7"}`, conflict, []string{"national:7, dkbr:7", "again with one of these prefixed ids", "national, dkbr"}, false},
		{ToolCompare, `{"a":"1","b":"2","unit":"m3"}`, core.Invalidf(`unit "m3" cannot apply to b (national:2 declared per kWh; restatable in kWh)`),
			[]string{"cannot apply to b", "omit unit"}, false},
		{ToolCompare, `{"a":"1","b":"2","impact":"a4"}`, core.Invalidf("b (national:2) does not publish a4 (impact a4); choose another impact"),
			[]string{"does not publish a4", "typical is published"}, false},
		{ToolSearch, `{"query":"x"}`, core.Unavailablef(errors.New("disk on fire"), "store unavailable"), []string{"cannot answer right now", "try again"}, true},
		{ToolSearch, `{"query":"x"}`, loading, []string{"still loading", "national: 3 of 9 resources indexed", "call " + ToolSearch + " again in a few seconds"}, false},
		{ToolDetails, `{"id":"7"}`, loading, []string{"still loading", "call " + ToolDetails + " again in a few seconds"}, false},
		{ToolSearch, `{"query":"x"}`, errors.New("nil pointer somewhere"), []string{"internal error", "Try again"}, true},
	} {
		f.s.err, f.r.err, f.c.err = tc.err, tc.err, tc.err
		before := f.logs.FilterMessage("mcp tool failed").Len()
		r := f.call(t, tc.tool, tc.args)
		tx := text(r)
		if !r.IsError || !strings.HasPrefix(tx, tc.tool+": ") {
			t.Errorf("%s: isError %v %q", tc.tool, r.IsError, tx)
		}
		for _, w := range tc.want {
			if !strings.Contains(tx, w) {
				t.Errorf("%s %s: %q lacks %q", tc.tool, tc.args, tx, w)
			}
		}
		if logged := f.logs.FilterMessage("mcp tool failed").Len() > before; logged != tc.logged {
			t.Errorf("%s %v: logged %v, want %v", tc.tool, tc.err, logged, tc.logged)
		}
		if strings.Contains(tx, "nil pointer") {
			t.Errorf("an internal error leaks its cause: %q", tx)
		}
	}
}

func TestIncomparableAndEmptyAnswersRender(t *testing.T) {
	a, b := particleBoard(), particleBoard()
	b.ID, b.Unit, b.NameSV = "6000000008", "kWh", "El"
	a.Localize(core.Swedish)
	b.Localize(core.Swedish)
	tx := compareText(&core.Comparison{Source: "S", A: a, B: b, Incomparable: true})
	if !strings.Contains(tx, "(declared per kg)") || !strings.Contains(tx, "(declared per kWh)") || !strings.Contains(tx, "incomparable") || !strings.HasSuffix(tx, "Source: S") {
		t.Fatalf("%s", tx)
	}
	tx = searchText(core.SearchResponse{Source: "S", Query: "zz", Lang: core.English, Notes: []string{"vector search unavailable"}}, core.SearchRequest{})
	if !strings.Contains(tx, `No resources match "zz" (lang en; catalogs national, dkbr)`) || !strings.Contains(tx, "Note: vector search unavailable") || !strings.Contains(tx, "Source: S") {
		t.Fatalf("%s", tx)
	}
}

func TestSearchNotesReachClientsThatAskForLogs(t *testing.T) {
	f := newFixture(t, false)
	f.s.resp.Notes = []string{"vector search unavailable: no embedder is configured; results are full-text only"}
	got := make(chan mcp.JSONRPCNotification, 4)
	f.cli.OnNotification(func(n mcp.JSONRPCNotification) { got <- n })
	if err := f.cli.SetLevel(context.Background(), mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelWarning}}); err != nil {
		t.Fatal(err)
	}
	r := f.call(t, ToolSearch, `{"query":"x"}`)
	if r.IsError || !strings.Contains(text(r), "Note: vector search unavailable") {
		t.Fatal(text(r))
	}
	select {
	case n := <-got:
		b, _ := json.Marshal(n)
		if n.Method != "notifications/message" || !strings.Contains(string(b), "vector search unavailable") || !strings.Contains(string(b), `"warning"`) {
			t.Fatalf("notification %s", b)
		}
	case <-time.After(10 * time.Second): // a safety net, not an expectation of speed
		t.Fatal("no log notification for the note")
	}
}

// TestStreamsOutliveTheServerTimeouts: the HTTP server bounds ordinary
// requests with read and write timeouts; an SSE session must survive them.
func TestStreamsOutliveTheServerTimeouts(t *testing.T) {
	f := newFixture(t, false)
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	f.srv.Mount(e)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const timeout = 300 * time.Millisecond
	hs := &http.Server{Handler: e, ReadTimeout: timeout, WriteTimeout: timeout}
	go hs.Serve(ln)
	t.Cleanup(func() {
		_ = f.srv.Close(context.Background())
		_ = hs.Close()
	})
	base := "http://" + ln.Addr().String()

	sse, err := client.NewSSEMCPClient(base + PathSSE)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := sse.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer sse.Close()
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "unit", Version: "1"}
	init.Params.ProtocolVersion = "2025-06-18"
	if _, err := sse.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * timeout) // past both timeouts of the stream's connection
	req := mcp.CallToolRequest{}
	req.Params.Name = ToolSearch
	req.Params.Arguments = map[string]any{"query": "spånskiva"}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	r, err := sse.CallTool(cctx, req)
	if err != nil || r.IsError {
		t.Fatalf("after the server timeouts the SSE session is gone: %v %v", err, r)
	}

	// The streamable transport's listening stream (GET /mcp) too.
	get, err := http.NewRequest(http.MethodGet, base+PathStreamable, nil)
	if err != nil {
		t.Fatal(err)
	}
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET /mcp: %s %v", resp.Status, resp.Header)
	}
	time.Sleep(4 * timeout)
	// Closing the sessions (as the app does at shutdown) ends the stream
	// cleanly; a connection cut by a timeout would fail the read instead.
	if err := f.srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	for {
		_, err := br.ReadString('\n')
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("the listening stream broke instead of ending: %v", err)
			}
			break
		}
	}
}

func TestDNSRebindingProtection(t *testing.T) {
	for _, allow := range []bool{false, true} {
		srv := New(Deps{Search: &fakeSearch{resp: sampleResponse()}, Resources: &fakeResources{}, Compare: &fakeCompare{}, AllowAnyHost: allow})
		e := gin.New()
		srv.Mount(e)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		hs := &http.Server{Handler: e}
		go hs.Serve(ln)
		for _, path := range []string{PathStreamable, PathSSE, PathMessage + "?sessionId=x"} {
			method := http.MethodPost
			if path == PathSSE {
				method = http.MethodGet
			}
			req, _ := http.NewRequest(method, "http://"+ln.Addr().String()+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			req.Host = "attacker.example"
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			resp, err := http.DefaultClient.Do(req.WithContext(ctx))
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			resp.Body.Close()
			cancel()
			if forbidden := resp.StatusCode == http.StatusForbidden; forbidden == allow {
				t.Errorf("allowAnyHost=%v %s %s with Host attacker.example: %s", allow, method, path, resp.Status)
			}
		}
		_ = srv.Close(context.Background())
		_ = hs.Close()
	}
}

// TestRequestLogsLikeTheRESTAccessLog: the library's per-request lines are
// debug for successes and info for failures, so info-level production logs
// are not flooded by agents' calls.
func TestRequestLogsLikeTheRESTAccessLog(t *testing.T) {
	f := newFixture(t, false)
	f.call(t, ToolSearch, `{"query":"x"}`)
	f.call(t, ToolDetails, `{}`)
	var tools []string
	for _, e := range f.logs.FilterMessage("mcp.tool").All() {
		tools = append(tools, e.Level.String()+" "+e.ContextMap()["outcome"].(string))
	}
	if strings.Join(tools, ",") != "info error_result" {
		t.Fatalf("mcp.tool lines at info and above: %v (want only the failed call)", tools)
	}
	for _, e := range f.logs.FilterMessage("mcp.request").All() {
		if e.ContextMap()["outcome"] == "ok" {
			t.Fatalf("a successful request logged at %s", e.Level)
		}
	}
}
