package binary

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/climatesearch/climatesearch/test/shareddata"
)

// searchAnswers asks each query of national and returns the answers
// without their timing.
func searchAnswers(p *proc, queries []string) map[string]string {
	out := map[string]string{}
	for _, q := range queries {
		var v map[string]any
		p.getJSON("/api/search?databases=national&limit=20&q="+url.QueryEscape(q), &v)
		delete(v, "took_ms")
		b, _ := json.Marshal(v)
		out[q] = string(b)
	}
	return out
}

// rebuilt waits for the boot's index line and tells whether the index was
// rebuilt from the store (false: taken up from the last clean stop).
func (p *proc) rebuilt() bool {
	p.t.Helper()
	l, _ := p.waitLog(0, "the index's boot line", func(l logLine) bool {
		return l.str("msg") == "search index rebuilt from the store" || l.str("msg") == "search index taken up from the last clean stop"
	})
	return l.str("msg") == "search index rebuilt from the store"
}

// TestRestartTakesUpTheIndexKeptAtAStop: a clean stop keeps the search
// index, and the next start takes it up instead of rebuilding it, with the
// same answers; a kill -9 after a write, or a write on the stopped
// directory by the CLI, makes the next start rebuild (and find the write).
func TestRestartTakesUpTheIndexKeptAtAStop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	probe := writeLargeStore(t, dir, 5000)
	env := baseEnv(dir)
	env["SERVICE_BOOT_INGEST"] = "false"
	env["SERVICE_EMBEDDER"] = "none"

	p := start(t, env)
	if !p.rebuilt() {
		t.Fatal("a store written without the service was not rebuilt into the index")
	}
	queries := []string{strings.Trim(strings.Fields(probe.NameSV)[0], ",.;:()"), "betong", "spånskiva isolering", "6000000000"}
	before := searchAnswers(p, queries)
	p.stop()
	p.waitLog(0, "the index kept at the stop", func(l logLine) bool { return l.str("msg") == "search index kept for the next start" })

	// 1. A clean stop: taken up, the same answers.
	p = start(t, env)
	if p.rebuilt() {
		t.Fatal("after a clean stop the index was rebuilt, not taken up")
	}
	if after := searchAnswers(p, queries); !maps.Equal(before, after) {
		t.Fatalf("the index taken up answers differently:\nbefore %v\nafter  %v", before, after)
	}

	// 2. A write, then kill -9: rebuilt, and the write is found.
	batch := `{"catalog":"national","resources":[{"id":"9900000001","name":"Zebrafärgad provskiva","unit":"kg","a1a3":1.5}]}`
	if status, body, err := postJSON(p.URL+"/admin/resources", batch); err != nil || status != http.StatusOK {
		t.Fatalf("batch: %d %s %v", status, truncate(body), err)
	}
	p.kill9()
	p = start(t, env)
	if !p.rebuilt() {
		t.Fatal("after kill -9 the index was taken up, not rebuilt")
	}
	var hits struct {
		Results []struct {
			ID string `json:"id"`
		} `json:"results"`
	}
	p.getJSON("/api/search?databases=national&q=zebraf%C3%A4rgad", &hits)
	if len(hits.Results) == 0 || hits.Results[0].ID != "9900000001" {
		t.Fatalf("the write before the kill is not found first: %+v", hits)
	}

	// 3. A clean stop, then the CLI writes the stopped directory: rebuilt.
	p.stop()
	code, out, errOut := cliRun(t, cliEnv(dir), "ingest", shareddata.Path(t, br25...), "--catalog", "dkbr", "--version", "BR25")
	if code != 0 {
		t.Fatalf("ingest on the stopped directory: exit %d\n%s\n%s", code, out, errOut)
	}
	p = start(t, env)
	if !p.rebuilt() {
		t.Fatal("after the CLI wrote the stopped directory the index was taken up, not rebuilt")
	}
	p.getJSON("/api/search?databases=dkbr&q=beton", &hits)
	if len(hits.Results) == 0 {
		t.Fatal("the CLI's catalog is not searchable after the restart")
	}
	p.stop()
}

// hybridAnswers asks each query of national with vector=true and returns
// the answers without their timing, failing on a note that says vectors
// are missing (being computed, none stored yet).
func hybridAnswers(p *proc, queries []string) map[string]string {
	p.t.Helper()
	out := map[string]string{}
	for _, q := range queries {
		var v map[string]any
		p.getJSON("/api/search?databases=national&limit=20&vector=true&q="+url.QueryEscape(q), &v)
		delete(v, "took_ms")
		notes, _ := v["notes"].([]any)
		for _, n := range notes {
			if s, _ := n.(string); strings.Contains(s, "still being computed") || strings.Contains(s, "vector search unavailable") {
				p.t.Fatalf("hybrid %q says vectors are missing: %v", q, notes)
			}
		}
		b, _ := json.Marshal(v)
		out[q] = string(b)
	}
	return out
}

// vectorsReady waits for the boot's "vectors ready" line and returns it.
func (p *proc) vectorsReady() logLine {
	p.t.Helper()
	l, _ := p.waitLog(0, "the vectors' boot line", func(l logLine) bool { return l.str("msg") == "vectors ready" })
	return l
}

// logged tells whether the process logged a line with msg so far.
func (p *proc) logged(msg string) bool {
	lines, _ := p.Stderr.snapshot()
	for _, l := range decodeLines(lines) {
		if l.str("msg") == msg {
			return true
		}
	}
	return false
}

// TestRestartTakesUpTheVectorsKeptAtAStop: a clean stop keeps the vector
// graph beside the text index, and the next start takes it up before it is
// ready: hybrid search answers at once as before the stop, with no note,
// and nothing is embedded or inserted. After a kill -9 the graph is
// rebuilt from the stored vectors and hybrid search converges.
func TestRestartTakesUpTheVectorsKeptAtAStop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	probe := writeLargeStore(t, dir, 3000) // above the exact-search size: a real graph
	env := baseEnv(dir)
	env["SERVICE_BOOT_INGEST"] = "false"
	env["SERVICE_EMBEDDER"] = "hash"

	p := start(t, env)
	if l := p.vectorsReady(); l["computed"] != float64(3000) {
		t.Fatalf("first start: %v", l)
	}
	queries := []string{strings.Trim(strings.Fields(probe.NameSV)[0], ",.;:()"), "betong", "spånskiva isolering", "isolering mineralull", "6000000000"}
	before := hybridAnswers(p, queries)
	p.stop()
	p.waitLog(0, "the vectors kept at the stop", func(l logLine) bool { return l.str("msg") == "vector index kept for the next start" })

	// 1. A clean stop: taken up before ready, the same answers at once.
	p = start(t, env)
	after := hybridAnswers(p, queries) // right after /readyz
	if !maps.Equal(before, after) {
		t.Fatalf("the graph taken up answers differently:\nbefore %v\nafter  %v", before, after)
	}
	if l := p.vectorsReady(); l["loaded"] != float64(3000) || l["computed"] != float64(0) || !p.logged("vector index taken up from the last clean stop") {
		t.Fatalf("after a clean stop the vectors were not taken up: %v", l)
	}

	// 2. A write, then kill -9: the graph is rebuilt, the write is found,
	// and what was there before answers as before.
	batch := `{"catalog":"national","resources":[{"id":"9900000001","name":"Zebrafärgad provskiva","unit":"kg","a1a3":1.5}]}`
	if status, body, err := postJSON(p.URL+"/admin/resources", batch); err != nil || status != http.StatusOK {
		t.Fatalf("batch: %d %s %v", status, truncate(body), err)
	}
	p.kill9()
	p = start(t, env)
	if l := p.vectorsReady(); l["loaded"] != float64(3001) || p.logged("vector index taken up from the last clean stop") {
		t.Fatalf("after kill -9 the vectors were not rebuilt from the store: %v", l)
	}
	var hits struct {
		Results []struct {
			ID string `json:"id"`
		} `json:"results"`
	}
	p.getJSON("/api/search?databases=national&vector=true&q=zebraf%C3%A4rgad+provskiva", &hits)
	if len(hits.Results) == 0 || hits.Results[0].ID != "9900000001" {
		t.Fatalf("the write before the kill is not found first by hybrid search: %+v", hits)
	}
	hybridAnswers(p, queries) // no notes
	p.stop()
	p.waitLog(0, "the vectors kept at the stop", func(l logLine) bool { return l.str("msg") == "vector index kept for the next start" })
}
