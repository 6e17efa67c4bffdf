package e2e

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// scrape GETs /metrics (not in /openapi.yaml: an operations endpoint in
// the Prometheus text format, so not validated against it).
func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET %s: %d %s %.300s", url, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	return string(b)
}

// sample returns the value of the series name{labels} (labels as written
// by the exposition, sorted by name, e.g. `mode="fulltext"`), and whether
// it is there.
func sample(body, series string) (float64, bool) {
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, series+" ") {
			v, err := strconv.ParseFloat(strings.Fields(line)[1], 64)
			return v, err == nil
		}
	}
	return 0, false
}

func mustSample(t *testing.T, body, series string) float64 {
	t.Helper()
	v, ok := sample(body, series)
	if !ok {
		t.Fatalf("no series %s in /metrics", series)
	}
	return v
}

// promtoolCheck runs `promtool check metrics` (Debian package prometheus;
// test/suite.sh installs it) on an exposition.
func promtoolCheck(t *testing.T, body string) {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool is missing: install the Debian package prometheus (apt-get install prometheus; test/suite.sh does)")
	}
	cmd := exec.Command(bin, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("promtool check metrics refuses /metrics: %v\n%s", err, out.String())
	}
}

// TestMetricsMoveAndPassPromtool: /metrics on the main listener is valid
// for promtool, and its counters move with what happens: HTTP requests by
// route template, searches by mode, ingests by catalog, origin and outcome,
// MCP tool calls by tool and outcome, webhook attempts by outcome, the
// webhook queue; the gauges give live resources and the age of the last
// ingest per catalog; the Go and process collectors are there.
func TestMetricsMoveAndPassPromtool(t *testing.T) {
	rcv := newReceiver(t)
	e := newEnv(t, webhookSettings(map[string]string{"SERVICE_WEBHOOK_BACKOFF": "1h"}))
	before := scrape(t, e.URL+"/metrics")
	promtoolCheck(t, before)
	for _, s := range []string{"go_goroutines", "process_resident_memory_bytes", `climatesearch_webhook_queue_depth`,
		`climatesearch_webhook_attempts_total{outcome="delivered"}`, `climatesearch_search_duration_seconds_count{mode="fulltext"}`} {
		if _, ok := sample(before, s); !ok {
			t.Errorf("a fresh process has no series %s", s)
		}
	}

	// A receiver that fails keeps the catalog.changed delivery pending.
	rcv.setRespond(func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) })
	d := e.createDestination(map[string]any{"url": rcv.URL, "events": []string{"catalog.changed"}})
	e.mustIngest()
	var body string
	eventually(t, "the failed delivery to be counted", func() bool {
		body = scrape(t, e.URL+"/metrics")
		v, _ := sample(body, `climatesearch_webhook_attempts_total{outcome="retrying"}`)
		return v >= 1
	})
	if v := mustSample(t, body, "climatesearch_webhook_queue_depth"); v != 1 {
		t.Errorf("webhook queue depth %v with one delivery waiting for its retry, want 1", v)
	}
	if v := mustSample(t, body, `climatesearch_ingests_total{catalog="national",origin="json",outcome="ok"}`); v != 1 {
		t.Errorf("national json ingests %v after one, want 1", v)
	}
	if v := mustSample(t, body, `climatesearch_catalog_resources{catalog="national",state="live"}`); v == 0 {
		t.Errorf("no live national resources in /metrics after the ingest")
	}
	if _, ok := sample(body, `climatesearch_catalog_last_ingest_age_seconds{catalog="national"}`); !ok {
		t.Errorf("no age of the last national ingest after one")
	}
	if _, ok := sample(body, `climatesearch_catalog_last_ingest_age_seconds{catalog="dkbr"}`); ok {
		t.Errorf("an age of the last dkbr ingest though it never had one")
	}
	// The operator's test delivery, answered.
	rcv.setRespond(nil)
	if r := e.do(http.MethodPost, "/admin/webhooks/"+d.ID+"/test", nil, nil); r.Status != http.StatusOK {
		t.Fatalf("test delivery: %d %s", r.Status, r.Body)
	}
	// A search (new text, so not a kept answer) and a refused batch.
	if r := e.get("/api/search?q=" + q("gipsskiva metrics")); r.Status != http.StatusOK {
		t.Fatalf("search: %d %s", r.Status, r.Body)
	}
	if r := e.do(http.MethodPost, "/admin/resources", []byte(`{"catalog":"dkbr","resources":[{"id":""}]}`), nil); r.Status != http.StatusBadRequest {
		t.Fatalf("invalid batch: %d %s", r.Status, r.Body)
	}
	// Two MCP tool calls: one answered, one a tool error.
	callTools(t, e.URL)

	after := scrape(t, e.URL+"/metrics")
	promtoolCheck(t, after)
	for series, want := range map[string]float64{
		`climatesearch_webhook_attempts_total{outcome="delivered"}`:                                         1,
		`climatesearch_search_duration_seconds_count{mode="fulltext"}`:                                      1, // REST
		`climatesearch_search_results_count{mode="fulltext"}`:                                               1,
		`climatesearch_search_duration_seconds_count{mode="hybrid"}`:                                        1, // MCP searches with vectors
		`climatesearch_ingests_total{catalog="dkbr",origin="file",outcome="refused"}`:                       1,
		`climatesearch_mcp_tool_calls_total{outcome="ok",tool="search_climate_data"}`:                       1,
		`climatesearch_mcp_tool_calls_total{outcome="tool_error",tool="get_resource_details"}`:              1,
		`climatesearch_http_requests_total{method="GET",route="/api/search",status="200"}`:                  1,
		`climatesearch_http_requests_total{method="POST",route="/admin/ingest/run",status="200"}`:           1,
		`climatesearch_http_request_duration_seconds_count{method="POST",route="/admin/webhooks/:id/test"}`: 1,
	} {
		if got := mustSample(t, after, series) - valueOr0(before, series); got != want {
			t.Errorf("%s moved by %v, want %v", series, got, want)
		}
	}
	if strings.Contains(after, "gipsskiva") || strings.Contains(after, `route="/api/resources/national`) {
		t.Errorf("a raw path or a query reached a label")
	}
}

func valueOr0(body, series string) float64 {
	v, _ := sample(body, series)
	return v
}

// callTools makes two MCP tool calls over streamable HTTP: a search that
// answers and a lookup of an id that does not exist (a tool error).
func callTools(t *testing.T, base string) {
	t.Helper()
	cli, err := client.NewStreamableHttpClient(base + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cli.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "e2e", Version: "1"}
	if _, err := cli.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "search_climate_data"
	req.Params.Arguments = map[string]any{"query": "betong metrics"}
	if res, err := cli.CallTool(ctx, req); err != nil || res.IsError {
		t.Fatalf("search_climate_data: %v %+v", err, res)
	}
	req.Params.Name = "get_resource_details"
	req.Params.Arguments = map[string]any{"id": "national:no-such-id"}
	if res, err := cli.CallTool(ctx, req); err != nil || !res.IsError {
		t.Fatalf("get_resource_details of a missing id: %v %+v, want a tool error", err, res)
	}
}
