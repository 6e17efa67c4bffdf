package mcpe2e

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/climatesearch/climatesearch/core"
)

// TestToolsOverEveryTransport: the five tools answer over streamable HTTP
// (both protocol eras) and legacy SSE with structured content that matches
// the declared output schema, the REST body for the same question, and a
// text rendering that cites the source.
func TestToolsOverEveryTransport(t *testing.T) {
	e := newEnv(t, nil)
	for _, kind := range transports {
		t.Run(kind, func(t *testing.T) {
			c := e.connect(t, kind)
			tools := c.tools(t)
			if len(tools) != 5 || tools["search_climate_data"].Name == "" || tools["get_resource_details"].Name == "" || tools["compare_resources"].Name == "" ||
				tools["find_alternatives"].Name == "" || tools["list_catalogs"].Name == "" {
				t.Fatalf("tools/list: %v", tools)
			}
			for name, tl := range tools {
				a := tl.Annotations
				if a.ReadOnlyHint == nil || !*a.ReadOnlyHint || a.IdempotentHint == nil || !*a.IdempotentHint || a.DestructiveHint == nil || *a.DestructiveHint {
					t.Errorf("%s annotations %+v", name, a)
				}
			}
			schemas := outputSchemas(t, tools)

			// search_climate_data
			var r *mcp.CallToolResult
			got := e.equalsREST(t, "search", "/api/search?q="+url.QueryEscape("spånskiva")+"&databases=national&limit=3&vector=true", func() []byte {
				r = c.call(t, "search_climate_data", map[string]any{"query": "spånskiva", "databases": []string{"national"}, "limit": 3})
				return structured(t, r)
			})
			conforms(t, schemas["search_climate_data"], "search_climate_data", got)
			var sr core.SearchResponse
			if err := json.Unmarshal(got, &sr); err != nil {
				t.Fatal(err)
			}
			if len(sr.Results) != 3 || sr.Results[0].ID != "6000000000" || sr.Results[0].Details != "/api/resources/national:6000000000" ||
				sr.Results[0].Origin == "" || sr.Results[0].MatchSource != core.MatchBoth || sr.Results[0].Reranked || len(sr.Notes) != 0 {
				t.Fatalf("search: %s", got)
			}
			if tx := resultText(r); !strings.Contains(tx, "1. Spånskiva [national:6000000000]") || !strings.Contains(tx, "Source: Boverket Klimatdatabas (Boverket, Sweden)") ||
				!strings.Contains(tx, "not affiliated") || !strings.Contains(tx, "https://klimatdatabasen.boverket.se/detaljer/10/6000000000") {
				t.Errorf("search text:\n%s", tx)
			}

			// defaults: all catalogs, Swedish, 10 hits; the br25 alias; English
			r = c.call(t, "search_climate_data", map[string]any{"query": "betong"})
			if err := json.Unmarshal(structured(t, r), &sr); err != nil || len(sr.Results) != 10 || sr.Lang != core.Swedish || sr.Source != core.SourceAll {
				t.Fatalf("defaults: %d hits, lang %s, source %q", len(sr.Results), sr.Lang, sr.Source)
			}
			r = c.call(t, "search_climate_data", map[string]any{"query": "beton", "databases": []string{"br25"}})
			if err := json.Unmarshal(structured(t, r), &sr); err != nil || len(sr.Results) == 0 || sr.Results[0].Catalog != core.DKBR || !strings.Contains(sr.Source, "Social- og Boligstyrelsen") {
				t.Fatalf("br25 alias: %+v", sr)
			}
			r = c.call(t, "search_climate_data", map[string]any{"query": "particle board", "lang": "en", "databases": []string{"national"}, "limit": 1})
			if err := json.Unmarshal(structured(t, r), &sr); err != nil || len(sr.Results) != 1 || sr.Results[0].Name != "Particle board" || sr.Results[0].Lang != core.English {
				t.Fatalf("english: %+v", sr)
			}

			// get_resource_details: prefixed, alias, lang
			r = c.call(t, "get_resource_details", map[string]any{"id": "national:6000000000", "lang": "en"})
			got = structured(t, r)
			conforms(t, schemas["get_resource_details"], "get_resource_details", got)
			_, rest := e.rest("/api/resources/national:6000000000?lang=en")
			sameJSON(t, "details", rest, got)
			if tx := resultText(r); !strings.HasPrefix(tx, "Particle board [national:6000000000] (Spånskiva)") || !strings.Contains(tx, "A1-A3 typical 0.39") ||
				!strings.Contains(tx, "Conversions: kg/m³ 700") || !strings.Contains(tx, "Product sheet: https://klimatdatabasen.boverket.se/detaljer/10/6000000000") ||
				!strings.Contains(tx, "Source: Boverket Klimatdatabas (Boverket, Sweden). climatesearch is not affiliated") {
				t.Errorf("details text:\n%s", tx)
			}
			r = c.call(t, "get_resource_details", map[string]any{"id": "br25:#G0164"})
			got = structured(t, r)
			conforms(t, schemas["get_resource_details"], "get_resource_details", got)
			_, rest = e.rest("/api/resources/dkbr:" + url.PathEscape("#G0164"))
			sameJSON(t, "details br25 alias", rest, got)
			r = c.call(t, "get_resource_details", map[string]any{"id": "6000000168"})
			if !strings.Contains(string(structured(t, r)), `"id":"6000000168"`) {
				t.Fatalf("bare id: %s", structured(t, r))
			}

			// compare_resources: explicit unit, shared unit, impact, incomparable
			r = c.call(t, "compare_resources", map[string]any{"a": "national:6000000000", "b": "national:6000000168", "unit": "m3"})
			got = structured(t, r)
			conforms(t, schemas["compare_resources"], "compare_resources", got)
			_, rest = e.rest("/api/resources/compare?a=national:6000000000&b=national:6000000168&unit=m3")
			sameJSON(t, "compare", rest, got)
			if tx := resultText(r); !strings.Contains(tx, "per m³") || !strings.Contains(tx, "a - b = ") || !strings.Contains(tx, "has the lower impact") || !strings.Contains(tx, "Source: ") {
				t.Errorf("compare text:\n%s", tx)
			}
			r = c.call(t, "compare_resources", map[string]any{"a": "national:6000000000", "b": "national:6000000016", "impact": "conservative", "lang": "en"})
			got = structured(t, r)
			conforms(t, schemas["compare_resources"], "compare_resources", got)
			_, rest = e.rest("/api/resources/compare?a=national:6000000000&b=national:6000000016&impact=conservative&lang=en")
			sameJSON(t, "compare conservative", rest, got)
			r = c.call(t, "compare_resources", map[string]any{"a": "national:6000000000", "b": "national:6000000008"})
			got = structured(t, r)
			conforms(t, schemas["compare_resources"], "compare_resources", got)
			var cmp core.Comparison
			if err := json.Unmarshal(got, &cmp); err != nil || !cmp.Incomparable || cmp.Unit != "" {
				t.Fatalf("kg vs kWh must be incomparable: %s", got)
			}
			if tx := resultText(r); !strings.Contains(tx, "incomparable") || !strings.Contains(tx, "declared per kWh") {
				t.Errorf("incomparable text:\n%s", tx)
			}
		})
	}
}

// TestEveryErrorIsAToolError: wrong calls come back as tool errors (isError,
// no structured content, never a protocol failure) whose message says what
// to do next; REST answers the same question with the matching status.
func TestEveryErrorIsAToolError(t *testing.T) {
	e := newEnv(t, nil)
	cases := []struct {
		tool string
		args map[string]any
		want []string
		rest string // the same question over REST, "" when REST has no equivalent
		code int
	}{
		// unknown ids
		{"get_resource_details", map[string]any{"id": "999"}, []string{`no resource "999" in any catalog`, "search_climate_data"}, "/api/resources/999", 404},
		{"get_resource_details", map[string]any{"id": "dkbr:6000000168"}, []string{"no resource dkbr:6000000168", "catalog:id"}, "/api/resources/dkbr:6000000168", 404},
		{"compare_resources", map[string]any{"a": "national:6000000000", "b": "national:1"}, []string{"b: no resource national:1", "search_climate_data"}, "/api/resources/compare?a=national:6000000000&b=national:1", 404},
		// an ambiguous bare id, with the candidates
		{"get_resource_details", map[string]any{"id": "6000000000"}, []string{`id "6000000000" exists in catalogs`, "national:6000000000", "dkbr:6000000000", "again with one of these prefixed ids", "candidate catalogs: national, dkbr"}, "/api/resources/6000000000", 409},
		{"compare_resources", map[string]any{"a": "6000000000", "b": "national:6000000168"}, []string{"a: id \"6000000000\" exists in catalogs", "national:6000000000, dkbr:6000000000"}, "/api/resources/compare?a=6000000000&b=national:6000000168", 409},
		// a unit that cannot apply, an impact that is not published
		{"compare_resources", map[string]any{"a": "national:6000000000", "b": "national:6000000008", "unit": "m3"}, []string{`unit "m3" cannot apply to b`, "declared per kWh", "omit unit"}, "/api/resources/compare?a=national:6000000000&b=national:6000000008&unit=m3", 400},
		{"compare_resources", map[string]any{"a": "national:6000000000", "b": "national:6000000168", "unit": "kWh"}, []string{`unit "kWh" cannot apply to a`, "nor to b"}, "/api/resources/compare?a=national:6000000000&b=national:6000000168&unit=kWh", 400},
		{"compare_resources", map[string]any{"a": "national:6000000000", "b": "national:6000000008", "impact": "a4"}, []string{"b (national:6000000008) does not publish a4", "another impact"}, "/api/resources/compare?a=national:6000000000&b=national:6000000008&impact=a4", 400},
		// invalid arguments
		{"search_climate_data", map[string]any{}, []string{"query is required"}, "/api/search", 400},
		{"search_climate_data", map[string]any{"query": strings.Repeat("a", 257)}, []string{"the limit is 256"}, "/api/search?q=" + strings.Repeat("a", 257), 400},
		{"search_climate_data", map[string]any{"query": "x", "lang": "fr"}, []string{`unknown lang "fr"`}, "/api/search?q=x&lang=fr", 400},
		{"search_climate_data", map[string]any{"query": "x", "databases": []string{"se"}}, []string{`unknown catalog "se"`, "national, dkbr or br25"}, "/api/search?q=x&databases=se", 400},
		{"search_climate_data", map[string]any{"query": "x", "limit": 51}, []string{"limit must be an integer between 1 and 50"}, "", 0},
		{"search_climate_data", map[string]any{"query": "x", "vector": false}, []string{`unknown argument "vector"`, "query, lang, databases, limit"}, "", 0},
		{"get_resource_details", map[string]any{"id": "se:1"}, []string{`unknown catalog "se"`}, "/api/resources/se:1", 400},
		{"get_resource_details", map[string]any{"id": strings.Repeat("9", 129)}, []string{"longer than 128"}, "/api/resources/" + strings.Repeat("9", 129), 400},
		{"compare_resources", map[string]any{"a": "national:6000000000"}, []string{"b is required"}, "", 0},
		{"compare_resources", map[string]any{"a": "national:6000000000", "b": "national:6000000168", "impact": "a1"}, []string{`unknown impact "a1"`}, "/api/resources/compare?a=national:6000000000&b=national:6000000168&impact=a1", 400},
	}
	for _, kind := range transports {
		t.Run(kind, func(t *testing.T) {
			c := e.connect(t, kind)
			for _, tc := range cases {
				r := c.call(t, tc.tool, tc.args)
				tx := resultText(r)
				if !r.IsError || r.StructuredContent != nil || !strings.HasPrefix(tx, tc.tool+": ") {
					t.Errorf("%s %v: isError %v, structured %v, text %q", tc.tool, tc.args, r.IsError, r.StructuredContent, tx)
					continue
				}
				for _, w := range tc.want {
					if !strings.Contains(tx, w) {
						t.Errorf("%s %v: %q lacks %q", tc.tool, tc.args, tx, w)
					}
				}
				if !strings.Contains(tx, "again") && !strings.Contains(tx, "search_climate_data") {
					t.Errorf("%s %v: %q does not tell the agent what to do next", tc.tool, tc.args, tx)
				}
				if kind == transports[0] && tc.rest != "" {
					if code, body := e.rest(tc.rest); code != tc.code {
						t.Errorf("REST %s: %d %s, want %d", tc.rest, code, body, tc.code)
					}
				}
			}
			// An unknown tool is the one protocol-level error.
			req := mcp.CallToolRequest{}
			req.Params.Name = "delete_everything"
			if _, err := c.cli.CallTool(t.Context(), req); err == nil {
				t.Errorf("an unknown tool answered")
			}
		})
	}
}

// TestNotesReachAgentsThatAskForLogs: without vectors the search says so in
// notes, in the text, and as a warning log message to a client that set
// its logging level.
func TestNotesReachAgentsThatAskForLogs(t *testing.T) {
	e := newEnv(t, map[string]string{"SERVICE_EMBEDDER": "none"})
	c := e.connect(t, "streamable-2025-11-25")
	msgs := make(chan string, 8)
	c.cli.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/message" {
			b, _ := json.Marshal(n.Params)
			msgs <- string(b)
		}
	})
	if err := c.cli.SetLevel(t.Context(), mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelWarning}}); err != nil {
		t.Fatal(err)
	}
	var r *mcp.CallToolResult
	e.equalsREST(t, "search without vectors", "/api/search?q="+url.QueryEscape("spånskiva")+"&databases=national&vector=true", func() []byte {
		r = c.call(t, "search_climate_data", map[string]any{"query": "spånskiva", "databases": []string{"national"}})
		return structured(t, r)
	})
	var sr core.SearchResponse
	if err := json.Unmarshal(structured(t, r), &sr); err != nil || len(sr.Notes) != 1 || !strings.Contains(sr.Notes[0], "no embedder") || sr.Results[0].MatchSource != core.MatchFTS {
		t.Fatalf("notes: %+v", sr.Notes)
	}
	if !strings.Contains(resultText(r), "Note: vector search unavailable") {
		t.Errorf("text lacks the note:\n%s", resultText(r))
	}
	var got string
	waitFor(t, "the warning log message", func() bool {
		select {
		case got = <-msgs:
			return true
		default:
			return false
		}
	})
	if !strings.Contains(got, `"level":"warning"`) || !strings.Contains(got, "no embedder") {
		t.Errorf("log message %s", got)
	}
}

// TestDNSRebindingProtectionStaysOn: over loopback, a foreign Host gets 403
// on every MCP endpoint, and the REST API is not affected.
func TestDNSRebindingProtectionStaysOn(t *testing.T) {
	e := newEnv(t, nil)
	for _, tc := range []struct{ method, path string }{
		{http.MethodPost, "/mcp"}, {http.MethodGet, "/mcp/sse"}, {http.MethodPost, "/mcp/message?sessionId=x"},
	} {
		req, err := http.NewRequest(tc.method, e.URL+tc.path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "rebound.attacker.example"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := httpClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s %s with a foreign Host: %s, want 403", tc.method, tc.path, resp.Status)
		}
	}
	if code, _ := httpDo(t, http.MethodGet, e.URL+"/healthz", "", map[string]string{"Host": "example.org"}); code != http.StatusOK {
		t.Errorf("healthz: %d", code)
	}
}

// TestStopEndsOpenStreams: an agent holding an SSE stream and a streamable
// listening stream open does not keep the app from stopping cleanly.
func TestStopEndsOpenStreams(t *testing.T) {
	e := newEnv(t, nil)
	e.connect(t, "sse")
	req, err := http.NewRequest(http.MethodGet, e.URL+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /mcp: %s", resp.Status)
	}
	e.stop() // fails the test when the graceful shutdown does not complete
}
