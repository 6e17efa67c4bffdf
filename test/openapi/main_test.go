// Package openapi tests web/openapi.yaml the way client generators and API
// tools see it: Redocly CLI's recommended ruleset (pinned npm), the Go
// client oapi-codegen v2 generates (committed in ./client, regenerated and
// compared), that client calling the compiled binary, and every example
// of the document working against a fresh offline start (the demo
// snapshot), as Swagger UI's "Try it out" sends it.
package openapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/adapters/boverket/boverkettest"
	"github.com/climatesearch/climatesearch/adapters/demosnapshot"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/test/testbin"
)

// patience bounds every wait; a safety net, never an expectation of speed.
const patience = 60 * time.Second

var (
	repoRoot string
	binPath  string
	testDir  string // this directory: package.json, node_modules, redocly.yaml
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "openapi tests:", err)
		return 1
	}
	testDir = wd
	bin, root, cleanup, err := testbin.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, "openapi tests:", err)
		return 1
	}
	defer cleanup()
	binPath, repoRoot = bin, root
	return m.Run()
}

// docPath is the document under test.
func docPath() string { return filepath.Join(repoRoot, "web", "openapi.yaml") }

// startOffline runs the binary on an empty store with the publisher down
// (its JSON and workbooks answer 503), as on a fresh start without
// network: it loads the demo snapshot. It returns once the snapshot is
// searchable.
func startOffline(t *testing.T) *testbin.Proc {
	t.Helper()
	down := boverkettest.NewServer(t)
	down.FailJSON(http.StatusServiceUnavailable)
	down.FailExcel(http.StatusServiceUnavailable)
	p := testbin.Start(t, binPath, repoRoot, map[string]string{
		"SERVICE_DATA_DIR":        t.TempDir(),
		"SERVICE_UPSTREAM_URL":    down.URL,
		"SERVICE_EXCEL_URL_SV":    down.ExcelURL("sv"),
		"SERVICE_EXCEL_URL_EN":    down.ExcelURL("en"),
		"SERVICE_INGEST_INTERVAL": "0",
		"SERVICE_INGEST_TIMEOUT":  "5s",
		"SERVICE_LOG_FORMAT":      "json",
		"SERVICE_LOG_LEVEL":       "info",
	}, patience)
	want := len(snapshot(t))
	deadline := time.Now().Add(patience)
	for {
		// The boot ingest stores the snapshot after /readyz first answers,
		// and the index follows the store: wait for both.
		var cats struct {
			Catalogs []struct {
				ID   string `json:"id"`
				Live int    `json:"live"`
			} `json:"catalogs"`
		}
		var sr struct {
			Results []json.RawMessage `json:"results"`
		}
		if getJSON(p.URL+"/api/catalogs", &cats) == http.StatusOK && len(cats.Catalogs) > 0 && cats.Catalogs[0].Live == want &&
			getJSON(p.URL+"/api/search?q=betong", &sr) == http.StatusOK && len(sr.Results) > 0 {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("the demo snapshot (%d resources) was not searchable within the safety limit: catalogs %+v\n%s", want, cats, testbin.Tail(p.Stderr.String(), 40))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// getJSON GETs url into v and returns the status (0 on a transport error).
func getJSON(u string, v any) int {
	resp, err := http.Get(u)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if json.Unmarshal(b, v) != nil {
		return -resp.StatusCode
	}
	return resp.StatusCode
}

// snapshot is the embedded demo snapshot by id, as the binary loads it.
func snapshot(t *testing.T) map[string]core.Resource {
	t.Helper()
	rel, err := demosnapshot.Source{}.Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[string]core.Resource, len(rel.Resources))
	for _, r := range rel.Resources {
		m[r.ID] = r
	}
	if len(m) == 0 {
		t.Fatal("the demo snapshot is empty")
	}
	return m
}

// escapeQuery is url.Values' encoding of one query.
func escapeQuery(q map[string]string) string {
	v := url.Values{}
	for k, s := range q {
		v.Set(k, s)
	}
	return v.Encode()
}
