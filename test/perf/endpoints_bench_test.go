// Package perf holds in-process benchmarks of the whole application, used by
// test/perf/measure.sh to say what dominates each figure of
// docs/PERFORMANCE.md. They boot the real fx application (badger store on a
// temporary directory, bluge index, gin API) against the publisher stand-in
// serving the real exports, and call the HTTP handler directly: no sockets,
// so a CPU profile shows the service's own work only.
//
//	go test -run '^$' -bench . -benchmem ./test/perf/
//	go test -run '^$' -bench 'Endpoints/search-spanskiva' -cpuprofile /tmp/cpu.out ./test/perf/
//
// The package has no tests; `go test ./...` only compiles it.
package perf

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/adapters/boverket/boverkettest"
	"github.com/climatesearch/climatesearch/adapters/httpapi"
	"github.com/climatesearch/climatesearch/cmd/climatesearch/app"
	"github.com/climatesearch/climatesearch/config"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/ingest"
)

// upstream serves the 02.06 sv and 02.07 en exports (235 merged resources)
// and no workbooks.
func upstream(b *testing.B) *boverkettest.Server {
	b.Helper()
	up := boverkettest.NewServer(b)
	up.SetJSON("sv", boverkettest.LoadExport(b, boverkettest.Export0206SV))
	up.SetJSON("en", boverkettest.LoadExport(b, boverkettest.Export0207EN))
	return up
}

// boot starts the application on an empty temporary directory, without a
// boot ingest or schedule, waits until its index has loaded (reads answer
// 503 before), and returns its handler and a stop function.
// extra options go to fx (e.g. fx.Populate of a part).
func boot(b *testing.B, up *boverkettest.Server, extra ...fx.Option) (http.Handler, func()) {
	b.Helper()
	return bootEnv(b, up, nil, extra...)
}

// bootEnv is boot with extra settings (SERVICE_*).
func bootEnv(b *testing.B, up *boverkettest.Server, settings map[string]string, extra ...fx.Option) (http.Handler, func()) {
	b.Helper()
	env := map[string]string{
		"SERVICE_ADDR":            "127.0.0.1:0",
		"SERVICE_DATA_DIR":        b.TempDir(),
		"SERVICE_UPSTREAM_URL":    up.URL,
		"SERVICE_EXCEL_URL_SV":    up.ExcelURL("sv"),
		"SERVICE_EXCEL_URL_EN":    up.ExcelURL("en"),
		"SERVICE_INGEST_INTERVAL": "0",
		"SERVICE_BOOT_INGEST":     "false",
		"SERVICE_LOG_LEVEL":       "warn",
	}
	for k, v := range settings {
		env[k] = v
	}
	cfg, err := config.Load(nil, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	var api *httpapi.API
	var vis *core.Visibility
	a := fx.New(app.Options(cfg, zap.NewNop(), append([]fx.Option{fx.Populate(&api, &vis)}, extra...)...))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.Start(ctx); err != nil {
		b.Fatal(err)
	}
	for !vis.Readiness().Ready {
		if ctx.Err() != nil {
			b.Fatalf("the index did not load: %s", vis.Readiness().Reason)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return api, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := a.Stop(ctx); err != nil {
			b.Errorf("stopping the app: %v", err)
		}
	}
}

// call serves one request and fails the benchmark unless it answers 200.
func call(b *testing.B, h http.Handler, method, target string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("%s %s: %d %.300s", method, target, rec.Code, rec.Body.String())
	}
	return rec
}

func runIngest(b *testing.B, h http.Handler) core.IngestResult {
	rec := call(b, h, http.MethodPost, "/admin/ingest/run?catalog=national")
	var res core.IngestResult
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		b.Fatal(err)
	}
	return res
}

// BenchmarkEndpoints times the read endpoints of docs/PERFORMANCE.md through
// the gin handler on a store holding the 235 national resources.
func BenchmarkEndpoints(b *testing.B) {
	h, stop := boot(b, upstream(b))
	defer stop()
	if res := runIngest(b, h); res.Upserted != 235 {
		b.Fatalf("first ingest upserted %d, want 235", res.Upserted)
	}
	for _, c := range []struct{ name, target string }{
		{"get-bare", "/api/resources/6000000000"},
		{"get-key", "/api/resources/national:6000000000"},
		{"search-spanskiva", "/api/search?q=sp%C3%A5nskiva"},
		{"search-betong", "/api/search?q=betong%20C30%2F37"},
		{"list", "/api/resources"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var n int
			for b.Loop() {
				n = call(b, h, http.MethodGet, c.target).Body.Len()
			}
			b.ReportMetric(float64(n), "resp-bytes")
		})
	}
}

// BenchmarkIngest times POST /admin/ingest/run?catalog=national: "first" on
// an empty store (235 upserts; the boot and shutdown of the app around each
// run are not timed), "unchanged" on a store that already holds the release.
// Both include fetching the two exports from the in-process stand-in.
func BenchmarkIngest(b *testing.B) {
	up := upstream(b)
	b.Run("first", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			h, stop := boot(b, up)
			b.StartTimer()
			if res := runIngest(b, h); res.Upserted != 235 {
				b.Fatalf("upserted %d, want 235", res.Upserted)
			}
			b.StopTimer()
			stop()
			b.StartTimer()
		}
	})
	b.Run("unchanged", func(b *testing.B) {
		h, stop := boot(b, up)
		defer stop()
		runIngest(b, h)
		b.ReportAllocs()
		for b.Loop() {
			if res := runIngest(b, h); res.Unchanged != 235 {
				b.Fatalf("unchanged %d, want 235", res.Unchanged)
			}
		}
	})
}

// BenchmarkRebuild times what a restart does before it listens: read every
// resource of the store and upsert them into the search index in one batch
// (ingest.Service.Rebuild, 235 resources; here the index already holds them,
// at boot it is empty).
func BenchmarkRebuild(b *testing.B) {
	var svc *ingest.Service
	h, stop := boot(b, upstream(b), fx.Populate(&svc))
	defer stop()
	runIngest(b, h)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		n, err := svc.Rebuild(ctx)
		if err != nil || n != 235 {
			b.Fatalf("rebuild: %d, %v", n, err)
		}
	}
}
