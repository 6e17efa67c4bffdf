package binary

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/adapters/badgerstore"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/ingest"
	"github.com/climatesearch/climatesearch/ports"
	"github.com/climatesearch/climatesearch/test/perf/synth"
	"github.com/climatesearch/climatesearch/test/testbin"
)

// largeStore is how many synthetic national resources TestStartsOnAStoreTooLargeToRebuildInTheStartTimeout
// stores: loading them into the search index takes seconds, far beyond the
// start timeout it sets, so the loading state lasts long enough to be seen
// by polling.
const largeStore = 30000

// writeLargeStore fills dataDir's store with n synthetic national resources
// (test/perf/synth: the real exports' vocabulary, deterministic), written
// with the badger adapter as an ingest writes them, and closes it. The
// binary then finds a store it has to load into its index at start.
func writeLargeStore(t *testing.T, dataDir string, n int) (probe core.Resource) {
	t.Helper()
	shared, err := synth.SharedDir()
	if err != nil {
		t.Fatal(err)
	}
	g, err := synth.New(shared, 1)
	if err != nil {
		t.Fatalf("the synthetic generator needs the real exports under %s: %v", shared, err)
	}
	st, err := badgerstore.Open(filepath.Join(dataDir, "badger"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const chunk = 2000 // well within one badger transaction
	for from := 0; from < n; from += chunk {
		rel, err := ingest.ReleaseFromBatch(g.Batch(from, min(chunk, n-from), 0))
		if err != nil {
			t.Fatal(err)
		}
		puts := make([]ports.StoredResource, 0, len(rel.Resources))
		for _, r := range rel.Resources {
			r.Source = core.SourceNational
			r.Normalize()
			puts = append(puts, ports.StoredResource{Resource: r, Hash: core.ContentHash(&r)})
		}
		if from == 0 {
			probe = puts[0].Resource
		}
		if err := st.Apply(ctx, core.National, ports.Changes{Put: puts}); err != nil {
			t.Fatal(err)
		}
	}
	meta := core.CatalogMeta{Catalog: core.National, Version: synth.Version}
	if err := st.PutMeta(ctx, meta); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return probe
}

// getStatus GETs path and returns status, the Retry-After header and the body.
func getStatus(t *testing.T, base, path string) (int, string, []byte) {
	t.Helper()
	resp, err := client.Get(base + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp.StatusCode, resp.Header.Get("Retry-After"), b
}

// TestStartsOnAStoreTooLargeToRebuildInTheStartTimeout: on a store whose
// index load takes far longer than SERVICE_START_TIMEOUT, the binary starts
// anyway and stays up (the load runs after the start, in the background).
// From the first answer on, /healthz answers 200 while /readyz answers 503
// naming the catalog and its progress, and search and the listing answer
// 503 with Retry-After and say the index is loading; then /readyz answers
// 200 and search finds what the listing shows. A build that loaded the
// index inside a start hook exits with the start timeout instead.
func TestStartsOnAStoreTooLargeToRebuildInTheStartTimeout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	probe := writeLargeStore(t, dir, largeStore)

	env := baseEnv(dir)
	env["SERVICE_BOOT_INGEST"] = "false"
	env["SERVICE_START_TIMEOUT"] = "100ms"
	env["SERVICE_EMBEDDER"] = "none" // the vectors of 30,000 resources are not what this test is about
	var p *proc
	for attempt := 0; ; attempt++ {
		addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		env["SERVICE_ADDR"] = addr
		p = spawn(t, env)
		p.Addr, p.URL = addr, "http://"+addr
		// Alive: /healthz answers 200 (the server listens), whatever the
		// state of the index.
		err := testbin.WaitHealthy(p.URL, p.done, patience)
		if err == nil {
			break
		}
		if p.exited() && strings.Contains(p.Stderr.String(), "address already in use") && attempt < 5 {
			continue
		}
		t.Fatalf("the binary did not start on a store of %d resources with SERVICE_START_TIMEOUT=100ms: %v (exit %v)\nstderr:\n%s",
			largeStore, err, p.err, tail(p.Stderr.String(), 40))
	}

	q := strings.Trim(strings.Fields(probe.NameSV)[0], ",.;:()")
	search := "/api/search?q=" + url.QueryEscape(q) + "&databases=national&limit=5"
	var (
		loadingSeen, progressSeen, healthWhileLoading bool
		searchRefused, listRefused                    bool
	)
	deadline := time.Now().Add(3 * patience) // a safety net for -race on a busy machine, never an expectation
	for {
		if p.exited() {
			t.Fatalf("the process exited while loading its index: %v\nstderr:\n%s", p.err, tail(p.Stderr.String(), 40))
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz never answered 200 within the safety limit\nstderr:\n%s", tail(p.Stderr.String(), 40))
		}
		status, retry, body := getStatus(t, p.URL, "/readyz")
		var rd core.Readiness
		if err := json.Unmarshal(body, &rd); err != nil {
			t.Fatalf("/readyz: %d %s: %v", status, body, err)
		}
		if status == http.StatusOK {
			if !rd.Ready || len(rd.Loading) != 0 {
				t.Fatalf("/readyz 200 with %s", body)
			}
			break
		}
		// The reason names what is still loading: the large national
		// catalog, or after it the (empty) dkbr one.
		named := false
		for _, l := range rd.Loading {
			named = named || strings.Contains(rd.Reason, string(l.Catalog))
		}
		if status != http.StatusServiceUnavailable || rd.Ready || retry == "" || !named {
			t.Fatalf("/readyz while loading: %d Retry-After %q %s", status, retry, body)
		}
		loadingSeen = true
		for _, l := range rd.Loading {
			if l.Catalog == core.National && l.Total == largeStore && l.Indexed <= l.Total && strings.Contains(rd.Reason, fmt.Sprint(largeStore)) {
				progressSeen = true
			}
		}
		if st, _, _ := getStatus(t, p.URL, "/healthz"); st == http.StatusOK {
			healthWhileLoading = true
		} else {
			t.Errorf("/healthz while loading: %d, want 200 (the process is alive)", st)
		}
		for _, c := range []struct {
			path    string
			refused *bool
		}{{search, &searchRefused}, {"/api/resources?databases=national", &listRefused}} {
			st, retry, body := getStatus(t, p.URL, c.path)
			switch st {
			case http.StatusServiceUnavailable:
				var e struct {
					Error string `json:"error"`
				}
				if err := json.Unmarshal(body, &e); err != nil || retry == "" || !strings.Contains(e.Error, "loading") || !strings.Contains(e.Error, "national") {
					t.Fatalf("GET %s while loading: 503 Retry-After %q %.300s: want Retry-After and a message saying national is loading", c.path, retry, body)
				}
				*c.refused = true
			case http.StatusOK:
				// The load finished between /readyz and this request.
			default:
				t.Fatalf("GET %s while loading: %d %.300s", c.path, st, body)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !loadingSeen || !progressSeen || !healthWhileLoading || !searchRefused || !listRefused {
		t.Fatalf("the loading state was not seen in full: /readyz 503 %v, with national's progress of %d %v, /healthz 200 meanwhile %v, search 503 %v, listing 503 %v",
			loadingSeen, largeStore, progressSeen, healthWhileLoading, searchRefused, listRefused)
	}
	if l, _ := p.waitLog(0, "the rebuild's log line", func(l logLine) bool { return l.str("msg") == "search index rebuilt from the store" }); l != nil {
		t.Logf("the index of %v resources loaded in %v (start timeout 100ms)", l["resources"], l["took"])
	}

	// Ready: search finds a resource the listing shows.
	listed := p.national()
	if len(listed) != largeStore {
		t.Fatalf("the listing shows %d national resources, want %d", len(listed), largeStore)
	}
	var sr struct {
		Results []struct {
			ID      string `json:"id"`
			Catalog string `json:"catalog"`
		} `json:"results"`
	}
	p.getJSON(search, &sr)
	if len(sr.Results) == 0 {
		t.Fatalf("search for %q finds nothing once ready", q)
	}
	for _, h := range sr.Results {
		if _, ok := listed[h.ID]; !ok || h.Catalog != "national" {
			t.Errorf("search hit %s:%s is not in the listing", h.Catalog, h.ID)
		}
	}
	if _, ok := listed[probe.ID]; !ok {
		t.Errorf("the listing lacks the stored resource %s", probe.ID)
	}
	p.stop()
}
