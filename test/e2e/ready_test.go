package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/fx"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// gatedIndex holds every write to the index until gate closes, so a test
// sees the service while its index is still loading after a start, for as
// long as it likes, without depending on how fast the load is.
type gatedIndex struct {
	ports.TextIndex
	gate <-chan struct{}
}

func (g *gatedIndex) wait(ctx context.Context) error {
	select {
	case <-g.gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gatedIndex) Upsert(ctx context.Context, rs []core.Resource) error {
	if err := g.wait(ctx); err != nil {
		return err
	}
	return g.TextIndex.Upsert(ctx, rs)
}

// Resume is held too: after a clean stop the index is taken up, not
// rebuilt, and that is the load this test watches.
func (g *gatedIndex) Resume(ctx context.Context, mark string) (bool, error) {
	if err := g.wait(ctx); err != nil {
		return false, err
	}
	return g.TextIndex.Resume(ctx, mark)
}

func (g *gatedIndex) Prepare(ctx context.Context, up []core.Resource, rm []core.Key) (ports.IndexChange, error) {
	if err := g.wait(ctx); err != nil {
		return nil, err
	}
	return g.TextIndex.Prepare(ctx, up, rm)
}

// TestReadsAnswer503WhileTheIndexLoads: after a restart on a full store the
// server answers at once; until the index has loaded, /readyz and every read
// answer 503 with Retry-After and say what is loading (all of it as
// /openapi.yaml documents), /healthz answers 200, and an ingest is refused
// the same way. Once loaded, the same requests answer.
func TestReadsAnswer503WhileTheIndexLoads(t *testing.T) {
	e := newEnv(t, nil)
	e.mustIngest()

	gate := make(chan struct{})
	opened := false
	open := func() {
		if !opened {
			opened = true
			close(gate)
		}
	}
	t.Cleanup(open)
	e.Extra = append(e.Extra, fx.Decorate(func(ix ports.TextIndex) ports.TextIndex { return &gatedIndex{TextIndex: ix, gate: gate} }))
	e.NoWait = true
	e.restart()

	if r := e.get("/healthz"); r.Status != http.StatusOK {
		t.Fatalf("/healthz while loading: %d %s", r.Status, r.Body)
	}
	r := e.get("/readyz")
	var rd core.Readiness
	r.json(t, &rd)
	if r.Status != http.StatusServiceUnavailable || rd.Ready || r.Header.Get("Retry-After") != "2" ||
		len(rd.Loading) == 0 || rd.Loading[0].Catalog != core.National || !strings.Contains(rd.Reason, "national") {
		t.Fatalf("/readyz while loading: %d %v %s", r.Status, r.Header, r.Body)
	}
	for _, path := range []string{
		"/api/search?q=betong",
		"/api/resources",
		"/api/resources?databases=national",
		"/api/resources/national:6000000000",
		"/api/resources/national:6000000000/origin",
		"/api/resources/compare?a=national:6000000000&b=national:6000000168",
	} {
		r := e.get(path)
		if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") != "2" {
			t.Errorf("GET %s while loading: %d Retry-After %q %s", path, r.Status, r.Header.Get("Retry-After"), r.Body)
			continue
		}
		if msg := r.errMsg(t); !strings.Contains(msg, "loading") || !strings.Contains(msg, "national") {
			t.Errorf("GET %s while loading: message %q does not say national is loading", path, msg)
		}
	}
	if _, r := e.ingest(); r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") != "2" {
		t.Errorf("an ingest while loading: %d %s", r.Status, r.Body)
	}

	open()
	e.waitReady()
	r = e.get("/readyz")
	rd = core.Readiness{}
	r.json(t, &rd)
	if !rd.Ready || len(rd.Loading) != 0 || rd.Reason != "" || r.Header.Get("Retry-After") != "" {
		t.Fatalf("/readyz once loaded: %d %v %s", r.Status, r.Header, r.Body)
	}
	var sr core.SearchResponse
	if r := e.get("/api/search?q=sp%C3%A5nskiva"); r.Status != http.StatusOK {
		t.Fatalf("search once loaded: %d %s", r.Status, r.Body)
	} else {
		r.json(t, &sr)
	}
	if len(sr.Results) == 0 {
		t.Fatalf("search once loaded finds nothing")
	}
	if r := e.get("/api/resources/national:6000000000"); r.Status != http.StatusOK {
		t.Fatalf("lookup once loaded: %d %s", r.Status, r.Body)
	}
}
