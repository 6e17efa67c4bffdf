package mcpe2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// inspector runs the MCP Inspector CLI (pinned in package.json) and decodes
// its JSON answer ({"result": ...} on stdout, or {"error": ...} on stderr).
func inspector(t *testing.T, args ...string) (cmdResult, map[string]json.RawMessage) {
	t.Helper()
	r := runNode(t, []string{"node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js"},
		append([]string{"--cli"}, append(args, "--format", "json", "--quiet")...)...)
	out := map[string]json.RawMessage{}
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.Stdout)), &out); err != nil {
		t.Fatalf("inspector %v: exit %d, stdout not JSON (%v)\nstdout: %.500s\nstderr: %s", args, r.Code, err, r.Stdout, tail(r.Stderr, 20))
	}
	return r, out
}

// toolResult is the part of a tools/call result the checks read.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

// TestInspectorCLI: the MCP Inspector CLI lists the five tools, calls them
// (a search with refinements too), lists and reads the resources and gets a prompt over streamable HTTP
// (/mcp) and legacy SSE (/mcp/sse) against the running binary, and gets what
// REST answers.
func TestInspectorCLI(t *testing.T) {
	p := startBinary(t, nil)
	for _, tr := range []struct{ transport, path string }{{"http", "/mcp"}, {"sse", "/mcp/sse"}} {
		t.Run(tr.transport, func(t *testing.T) {
			target := []string{p.URL + tr.path, "--transport", tr.transport}
			call := func(tool, argsJSON string) (cmdResult, toolResult) {
				t.Helper()
				r, out := inspector(t, append(target, "--method", "tools/call", "--tool-name", tool, "--tool-args-json", argsJSON)...)
				var res toolResult
				if err := json.Unmarshal(out["result"], &res); err != nil {
					t.Fatalf("%s %s: exit %d, no result: %s", tool, argsJSON, r.Code, r.Stdout)
				}
				return r, res
			}

			r, out := inspector(t, append(target, "--method", "tools/list")...)
			var list struct {
				Tools []struct {
					Name         string          `json:"name"`
					Description  string          `json:"description"`
					InputSchema  json.RawMessage `json:"inputSchema"`
					OutputSchema json.RawMessage `json:"outputSchema"`
					Annotations  struct {
						ReadOnly   *bool `json:"readOnlyHint"`
						Idempotent *bool `json:"idempotentHint"`
					} `json:"annotations"`
				} `json:"tools"`
			}
			if err := json.Unmarshal(out["result"], &list); err != nil || r.Code != 0 {
				t.Fatalf("tools/list: exit %d %v: %s", r.Code, err, r.Stdout)
			}
			var names []string
			for _, tl := range list.Tools {
				names = append(names, tl.Name)
				if tl.Description == "" || len(tl.InputSchema) == 0 || len(tl.OutputSchema) == 0 ||
					tl.Annotations.ReadOnly == nil || !*tl.Annotations.ReadOnly || tl.Annotations.Idempotent == nil || !*tl.Annotations.Idempotent {
					t.Errorf("tool %s as the Inspector sees it: %+v", tl.Name, tl)
				}
			}
			sort.Strings(names)
			if strings.Join(names, ",") != "compare_resources,find_alternatives,get_resource_details,list_catalogs,search_climate_data" {
				t.Fatalf("tools/list: %v", names)
			}

			// search_climate_data equals REST (asked before and after, as
			// the full-text index settles for a moment after the ingest).
			var res toolResult
			search := func(what, restQuery, argsJSON string) {
				t.Helper()
				for attempt := 0; ; attempt++ {
					_, before := httpDo(t, http.MethodGet, p.URL+"/api/search?vector=true&"+restQuery, "", nil)
					r, res = call("search_climate_data", argsJSON)
					_, after := httpDo(t, http.MethodGet, p.URL+"/api/search?vector=true&"+restQuery, "", nil)
					if reflect.DeepEqual(decode(t, before), decode(t, after)) {
						sameJSON(t, what, before, res.StructuredContent)
						return
					}
					if attempt == 20 {
						t.Fatal("REST never answered the same twice in a row")
					}
				}
			}
			// A refined search: unit, sort, a range and facets.
			search("inspector refined search", "q=betong&databases=national&limit=3&unit=kg&sort=a1a3&a1a3_max=0.1&facets=category,unit",
				`{"query":"betong","databases":["national"],"limit":3,"unit":"kg","sort":"a1a3","a1a3_max":0.1,"facets":["category","unit"]}`)
			if r.Code != 0 || res.IsError || !strings.Contains(res.Content[0].Text, "lowest A1-A3 typical first (sort a1a3)") || !strings.Contains(res.Content[0].Text, "By unit over all") {
				t.Fatalf("refined search: exit %d %+v", r.Code, res)
			}
			search("inspector search", "q="+url.QueryEscape("spånskiva")+"&databases=national&limit=3", `{"query":"spånskiva","databases":["national"],"limit":3}`)
			if r.Code != 0 || res.IsError || len(res.StructuredContent) == 0 || len(res.Content) == 0 ||
				!strings.Contains(res.Content[0].Text, "Spånskiva [national:6000000000]") || !strings.Contains(res.Content[0].Text, "Source: Boverket Klimatdatabas") {
				t.Fatalf("search: exit %d %+v", r.Code, res)
			}
			var sr struct {
				Results []struct {
					ID      string `json:"id"`
					Details string `json:"details"`
					Origin  string `json:"origin"`
				} `json:"results"`
			}
			if err := json.Unmarshal(res.StructuredContent, &sr); err != nil || len(sr.Results) != 3 || sr.Results[0].ID != "6000000000" ||
				sr.Results[0].Details != "/api/resources/national:6000000000" || sr.Results[0].Origin == "" {
				t.Fatalf("search structured content: %s", res.StructuredContent)
			}

			// get_resource_details, with the Inspector's own key=value coercion
			// turning the bare id into a number.
			ir, out := inspector(t, append(target, "--method", "tools/call", "--tool-name", "get_resource_details", "--tool-arg", "id=6000000168", "lang=en")...)
			if err := json.Unmarshal(out["result"], &res); err != nil || ir.Code != 0 || res.IsError {
				t.Fatalf("details: exit %d %s", ir.Code, ir.Stdout)
			}
			_, rest := httpDo(t, http.MethodGet, p.URL+"/api/resources/6000000168?lang=en", "", nil)
			sameJSON(t, "inspector details", rest, res.StructuredContent)
			if !strings.Contains(res.Content[0].Text, "[national:6000000168]") || !strings.Contains(res.Content[0].Text, "not affiliated") {
				t.Errorf("details text: %s", res.Content[0].Text)
			}

			// compare_resources
			r, res = call("compare_resources", `{"a":"national:6000000000","b":"national:6000000168","unit":"m3"}`)
			if r.Code != 0 || res.IsError {
				t.Fatalf("compare: exit %d %+v", r.Code, res)
			}
			_, rest = httpDo(t, http.MethodGet, p.URL+"/api/resources/compare?a=national:6000000000&b=national:6000000168&unit=m3", "", nil)
			sameJSON(t, "inspector compare", rest, res.StructuredContent)

			// find_alternatives and list_catalogs
			r, res = call("find_alternatives", `{"id":"national:6000000032","limit":3}`)
			if r.Code != 0 || res.IsError || !strings.Contains(res.Content[0].Text, "klimatförbättrad C30/37 [national:6000000033]") {
				t.Fatalf("alternatives: exit %d %+v", r.Code, res)
			}
			_, rest = httpDo(t, http.MethodGet, p.URL+"/api/resources/national:6000000032/alternatives?limit=3", "", nil)
			sameJSON(t, "inspector alternatives", rest, res.StructuredContent)
			r, res = call("list_catalogs", `{}`)
			if r.Code != 0 || res.IsError || !strings.Contains(res.Content[0].Text, "235 live") {
				t.Fatalf("catalogs: exit %d %+v", r.Code, res)
			}

			// Resources and prompts.
			r, out = inspector(t, append(target, "--method", "resources/list")...)
			if r.Code != 0 || !strings.Contains(string(out["result"]), `"climate://catalogs"`) {
				t.Fatalf("resources/list: exit %d %s", r.Code, r.Stdout)
			}
			r, out = inspector(t, append(target, "--method", "resources/templates/list")...)
			if r.Code != 0 || !strings.Contains(string(out["result"]), `"climate://{catalog}/{id}"`) {
				t.Fatalf("resources/templates/list: exit %d %s", r.Code, r.Stdout)
			}
			r, out = inspector(t, append(target, "--method", "resources/read", "--uri", "climate://national/6000000168")...)
			var read struct {
				Contents []struct {
					URI  string `json:"uri"`
					Text string `json:"text"`
				} `json:"contents"`
			}
			if err := json.Unmarshal(out["result"], &read); err != nil || r.Code != 0 || len(read.Contents) != 1 {
				t.Fatalf("resources/read: exit %d %s", r.Code, r.Stdout)
			}
			_, rest = httpDo(t, http.MethodGet, p.URL+"/api/resources/national:6000000168", "", nil)
			sameJSON(t, "inspector resources/read", rest, []byte(read.Contents[0].Text))
			r, out = inspector(t, append(target, "--method", "prompts/get", "--prompt-name", "find_lower_carbon_alternative", "--prompt-args", "material=national:6000000032")...)
			if r.Code != 0 || !strings.Contains(string(out["result"]), "find_alternatives") {
				t.Fatalf("prompts/get: exit %d %s", r.Code, r.Stdout)
			}

			// A tool error is a result with isError (the CLI exits 5 for
			// it), never a protocol failure.
			r, res = call("compare_resources", `{"a":"national:6000000000","b":"national:6000000008","unit":"m3"}`)
			if r.Code != 5 || !res.IsError || !strings.Contains(res.Content[0].Text, `unit "m3" cannot apply to b`) {
				t.Fatalf("unit error: exit %d %+v", r.Code, res)
			}
			r, res = call("get_resource_details", `{"id":"999"}`)
			if r.Code != 5 || !res.IsError || !strings.Contains(res.Content[0].Text, "search_climate_data") {
				t.Fatalf("unknown id: exit %d %+v", r.Code, res)
			}
		})
	}
	// An agent still holding an SSE stream open does not keep SIGTERM from
	// stopping the service cleanly (exit 0, not a shutdown that times out).
	req, err := http.NewRequest(http.MethodGet, p.URL+"/mcp/sse", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if line, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil || line != "event: endpoint\n" {
		t.Fatalf("GET /mcp/sse: %s %q %v", resp.Status, line, err)
	}
	if code := p.stop(); code != 0 {
		t.Fatalf("exit code after SIGTERM with an open SSE stream = %d", code)
	}
}

// TestConformanceSuite runs the official MCP conformance suite (every
// scenario, active and pending) against /mcp of the running binary. Every
// scenario must pass except those in conformance-baseline.yml, and each of
// those must fail only for the reason the baseline gives: a fixture tool of
// the suite's own reference server, or a feature (resources, prompts,
// completions) this server does not offer.
func TestConformanceSuite(t *testing.T) {
	p := startBinary(t, nil)
	baseline := npmFile(t, "conformance-baseline.yml")
	outDir := t.TempDir()
	r := runNode(t, []string{"node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"},
		"server", "--url", p.URL+"/mcp", "--suite", "all", "--expected-failures", baseline, "--output-dir", outDir)

	expected := readBaseline(t, baseline)
	results := readConformanceResults(t, outDir)
	started := regexp.MustCompile(`(?m)^=== Running scenario: (.+) ===$`).FindAllStringSubmatch(r.Stdout, -1)
	if len(started) == 0 || len(started) != len(results) {
		t.Fatalf("%d scenarios started, %d with results\n%s", len(started), len(results), tail(r.Stdout+r.Stderr, 40))
	}
	allowed := regexp.MustCompile(`[Tt]ool '(test_[a-z0-9_]+|json_schema_2020_12_tool)' not found|prompt 'test_[a-z0-9_]+' not found|resource URI 'test://[a-z0-9/_-]+': resource not found|MCP error -32601: resources subscribe not supported`)
	var table []string
	for _, name := range sortedKeys(results) {
		checks := results[name]
		failed := []string{}
		for _, c := range checks {
			if c.Status != "SUCCESS" && c.Status != "INFO" {
				failed = append(failed, c.Status+": "+c.ErrorMessage)
			}
		}
		switch {
		case len(failed) == 0 && expected[name]:
			t.Errorf("%s passes but is in the baseline: remove it", name)
		case len(failed) == 0:
			table = append(table, fmt.Sprintf("  pass      %s (%d checks)", name, len(checks)))
		case !expected[name]:
			t.Errorf("%s fails and is not in the baseline: %s", name, strings.Join(failed, "; "))
		default:
			for _, f := range failed {
				if !allowed.MatchString(f) {
					t.Errorf("%s is baselined but fails for another reason than a fixture or an absent feature: %s", name, f)
				}
			}
			table = append(table, fmt.Sprintf("  baseline  %s: %s", name, strings.Join(failed, "; ")))
		}
	}
	for name := range expected {
		if _, ok := results[name]; !ok {
			t.Errorf("baseline entry %s is not a scenario of the suite", name)
		}
	}
	if r.Code != 0 {
		t.Errorf("the conformance CLI exited %d\n%s", r.Code, tail(r.Stdout, 40))
	}
	t.Logf("conformance scenarios (%d):\n%s", len(results), strings.Join(table, "\n"))
}

type check struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// readConformanceResults reads <out>/server-<scenario>-<timestamp>/checks.json.
func readConformanceResults(t *testing.T, dir string) map[string][]check {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(-\d{3})?Z$`)
	out := map[string][]check{}
	for _, e := range entries {
		m := re.FindStringSubmatch(e.Name())
		if m == nil {
			t.Fatalf("unexpected result directory %s", e.Name())
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "checks.json"))
		if err != nil {
			t.Fatal(err)
		}
		var cs []check
		if err := json.Unmarshal(b, &cs); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		out[m[1]] = cs
	}
	return out
}

// readBaseline reads the scenario names under server: of the baseline.
func readBaseline(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]bool{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		switch {
		case strings.TrimSpace(line) == "":
		case !strings.HasPrefix(line, " "):
			in = strings.TrimSpace(line) == "server:"
		case in && strings.HasPrefix(strings.TrimSpace(line), "- "):
			out[strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "- "))] = true
		}
	}
	if len(out) == 0 {
		t.Fatalf("no server scenarios in %s", path)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
