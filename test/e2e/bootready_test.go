package e2e

import (
	"context"
	"net/http"
	"testing"

	"go.uber.org/fx"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/ingest"
	"github.com/climatesearch/climatesearch/ports"
)

// gatedSource holds every fetch of the publisher until gate closes.
type gatedSource struct {
	ports.CatalogSource
	gate <-chan struct{}
}

func (g gatedSource) Fetch(ctx context.Context) (core.Release, error) {
	select {
	case <-g.gate:
	case <-ctx.Done():
		return core.Release{}, ctx.Err()
	}
	return g.CatalogSource.Fetch(ctx)
}

func readiness(t *testing.T, e *env) (int, core.Readiness) {
	t.Helper()
	r := e.get("/readyz")
	var rd core.Readiness
	r.json(t, &rd)
	if (r.Status == http.StatusOK) != rd.Ready || (r.Status != http.StatusOK && r.Header.Get("Retry-After") != "2") {
		t.Fatalf("/readyz: %d %v %s", r.Status, r.Header, r.Body)
	}
	return r.Status, rd
}

// TestReadyWaitsForTheBootIngest: with SERVICE_BOOT_INGEST on, /readyz
// answers 503 "boot ingest running" after the index has loaded and until
// the boot ingest has finished, then 200 with boot_ingest finished; a boot
// ingest that fails (the publisher down, data in the store) makes the
// service ready too, saying failed. /healthz answers 200 throughout.
func TestReadyWaitsForTheBootIngest(t *testing.T) {
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
	e.settings["SERVICE_BOOT_INGEST"] = "true"
	e.Extra = append(e.Extra, fx.Decorate(func(s ingest.Sources) ingest.Sources {
		up := map[core.CatalogID][]ports.CatalogSource{}
		for c, srcs := range s.Upstream {
			for _, src := range srcs {
				up[c] = append(up[c], gatedSource{CatalogSource: src, gate: gate})
			}
		}
		s.Upstream = up
		return s
	}))
	e.NoWait = true
	e.restart()

	var rd core.Readiness
	eventually(t, "the index to load", func() bool {
		_, rd = readiness(t, e)
		return len(rd.Loading) == 0
	})
	if status, rd := readiness(t, e); status != http.StatusServiceUnavailable || rd.Reason != "boot ingest running" || rd.BootIngest != core.BootIngestRunning {
		t.Fatalf("/readyz during the boot ingest: %d %+v", status, rd)
	}
	if r := e.get("/healthz"); r.Status != http.StatusOK {
		t.Fatalf("/healthz during the boot ingest: %d", r.Status)
	}
	if r := e.get("/api/search?q=betong"); r.Status != http.StatusOK {
		t.Fatalf("a read during the boot ingest (the stored data is served): %d", r.Status)
	}
	open()
	eventually(t, "ready after the boot ingest", func() bool {
		status, _ := readiness(t, e)
		return status == http.StatusOK
	})
	if _, rd := readiness(t, e); rd.BootIngest != core.BootIngestFinished || rd.Reason != "" {
		t.Fatalf("/readyz after the boot ingest: %+v", rd)
	}

	// The publisher down: the boot ingest fails, the service is ready on
	// what it stores.
	e.Up.FailJSON(http.StatusServiceUnavailable)
	e.Up.FailExcel(http.StatusServiceUnavailable)
	e.restart()
	eventually(t, "ready after a failed boot ingest", func() bool {
		status, _ := readiness(t, e)
		return status == http.StatusOK
	})
	if _, rd := readiness(t, e); rd.BootIngest != core.BootIngestFailed {
		t.Fatalf("/readyz after a failed boot ingest: %+v", rd)
	}
}
