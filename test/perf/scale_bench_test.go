package perf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/test/perf/synth"
	"github.com/climatesearch/climatesearch/test/shareddata"
)

// BenchmarkScale loads SCALE_N (default 10000) synthetic national resources
// (test/perf/synth, seed 1, the resources test/perf/scale.sh loads) through
// POST /admin/resources in batches of 10,000 into the real app (hash
// embedder, as the binary's default), then times on that catalog:
//
//	one-changed   a one-resource batch whose A1-A3 values changed
//	unchanged     a one-resource batch identical to the stored resource
//	search        GET /api/search?q=spånskiva
//	hybrid        GET /api/search?q=spånskiva&vector=true
//
// The load itself is not a sub-benchmark: it is reported once on stderr
// (lines "scale: ...": the rate, the process's peak RSS after it, how long
// the background vectors took to catch up after it, the peak RSS then, and
// progress every 100,000). -bench 'Scale$/^$' runs the load alone. With SCALE_PROFILE=DIR every
// sub-benchmark writes DIR/<name>.cpu (CPU profile of its timed loop only,
// not of the load) and DIR/<name>.heap (heap profile after its loop), which
// the process-wide -cpuprofile cannot separate:
//
//	SCALE_N=100000 SCALE_PROFILE=/tmp/prof go test -run '^$' -bench Scale -benchtime 20x -timeout 30m ./test/perf/
//	go tool pprof -top /tmp/prof/one-changed.cpu
func BenchmarkScale(b *testing.B) {
	n := synth.Size(b, "SCALE_N", 10000)
	profDir := os.Getenv("SCALE_PROFILE")
	gen, err := synth.New(shareddata.Root(b), 1)
	if err != nil {
		b.Fatal(err)
	}
	// Every search computed: kept answers would time a map lookup.
	h, stop := bootEnv(b, upstream(b), map[string]string{"SERVICE_EMBEDDER": "hash", "SERVICE_KEEP_ANSWERS": "false"})
	defer stop()
	post := func(batch core.ResourceBatch) core.IngestResult {
		body, err := json.Marshal(batch)
		if err != nil {
			b.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, "/admin/resources", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("POST /admin/resources: %d %.300s", rec.Code, rec.Body.String())
		}
		var res core.IngestResult
		if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
			b.Fatal(err)
		}
		return res
	}
	// With SCALE_PROFILE the load (the POSTs, with the background vectors
	// they start) and the catch-up of the vectors after it are profiled
	// too: load.cpu, load.heap (its -sample_index=alloc_space is what the
	// load allocated), vectors.cpu.
	stopProf := startProfile(b, profDir, "load")
	start := time.Now()
	for from := 0; from < n; from += core.MaxBatchResources {
		post(gen.Batch(from, min(core.MaxBatchResources, n-from), 0))
		if done := from + core.MaxBatchResources; done%100000 == 0 && done < n {
			// Progress on stderr: a long run (1,000,000) stopped early still
			// says how far it got (a benchmark's own log comes at its end).
			fmt.Fprintf(os.Stderr, "scale: %d loaded in %.1f s (%.0f/s), VmRSS %d MiB, VmHWM %d MiB\n", done,
				time.Since(start).Seconds(), float64(done)/time.Since(start).Seconds(), procStatus(b, "VmRSS:")>>20, procStatus(b, "VmHWM:")>>20)
		}
	}
	loadRate := float64(n) / time.Now().Sub(start).Seconds()
	stopProf()
	// On stderr as well: the parent of sub-benchmarks prints neither its
	// log nor its metrics.
	fmt.Fprintf(os.Stderr, "scale: loaded %d resources at %.0f resources/s; VmHWM %d MiB\n", n, loadRate, vmHWM(b)>>20)
	stopProf = startProfile(b, profDir, "vectors")
	defer func() { stopProf() }()
	// The largest live heap of the catch-up, with its profile in
	// SCALE_PROFILE/vectors-peak.heap (the one at the largest live heap).
	peakFile := ""
	if profDir != "" {
		peakFile = filepath.Join(profDir, "vectors-peak.heap")
	}
	peak := newHeapPeak(peakFile)
	peak.start()
	// The timed loops start once the background vectors have caught up
	// (hybrid search stops noting a backlog): they would share the cores.
	caught := time.Now()
	for {
		var ans core.SearchResponse
		if err := json.Unmarshal(call(b, h, http.MethodGet, "/api/search?q=zzqqxx&vector=true&limit=1").Body.Bytes(), &ans); err != nil {
			b.Fatal(err)
		}
		if !vectorBacklog(ans.Notes) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	peak.stop(b)
	took := time.Since(caught)
	runtime.GC() // what the process keeps once everything is in
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	fmt.Fprintf(os.Stderr, "scale: vectors caught up %.1f s after the load; VmHWM %d MiB; peak heap %d MB (%.1f s in), peak live heap %d MB, peak RssAnon %d MiB, RssFile %d MiB; live heap then %d MB\n",
		took.Seconds(), vmHWM(b)>>20, peak.max/1e6, peak.maxAt.Seconds(), peak.maxLive/1e6, peak.maxAnon>>20, peak.maxFile>>20, live[0].Value.Uint64()/1e6)
	stopProf()
	stopProf = func() {}

	k := n / 2
	variant := 0
	profile := func(b *testing.B, name string, loop func()) {
		b.ReportAllocs()
		var f *os.File
		if profDir != "" {
			if err := os.MkdirAll(profDir, 0o755); err != nil {
				b.Fatal(err)
			}
			if f, err = os.Create(filepath.Join(profDir, name+".cpu")); err != nil {
				b.Fatal(err)
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				b.Fatal(err)
			}
		}
		for b.Loop() {
			loop()
		}
		if f != nil {
			pprof.StopCPUProfile()
			f.Close()
			runtime.GC()
			hf, err := os.Create(filepath.Join(profDir, name+".heap"))
			if err != nil {
				b.Fatal(err)
			}
			if err := pprof.WriteHeapProfile(hf); err != nil {
				b.Fatal(err)
			}
			hf.Close()
		}
		b.ReportMetric(float64(n), "catalog")
	}
	b.Run("one-changed", func(b *testing.B) {
		profile(b, "one-changed", func() {
			variant++
			if res := post(gen.Batch(k, 1, variant)); res.Upserted != 1 {
				b.Fatalf("changed batch: %+v", res)
			}
		})
	})
	b.Run("unchanged", func(b *testing.B) {
		same := gen.Batch(k, 1, variant)
		post(same)
		profile(b, "unchanged", func() {
			if res := post(same); res.Unchanged != 1 {
				b.Fatalf("unchanged batch: %+v", res)
			}
		})
	})
	for _, c := range []struct{ name, target string }{
		{"search", "/api/search?q=sp%C3%A5nskiva"},
		{"hybrid", "/api/search?q=sp%C3%A5nskiva&vector=true"},
	} {
		b.Run(c.name, func(b *testing.B) {
			profile(b, c.name, func() { call(b, h, http.MethodGet, c.target) })
		})
	}
}

// startProfile starts a CPU profile DIR/name.cpu (nothing when dir is
// empty); the function it returns stops it and writes DIR/name.heap.
func startProfile(b *testing.B, dir, name string) func() {
	if dir == "" {
		return func() {}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, name+".cpu"))
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
		hf, err := os.Create(filepath.Join(dir, name+".heap"))
		if err != nil {
			b.Fatal(err)
		}
		defer hf.Close()
		if err := pprof.Lookup("heap").WriteTo(hf, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// vectorBacklog tells whether a hybrid search's notes say that vectors are
// still being computed, or that none is indexed yet (other notes, such as a
// match set over core.MaxMatchSet at 100,000 resources, stay).
func vectorBacklog(notes []string) bool {
	for _, n := range notes {
		if strings.HasPrefix(n, "vectors are still being computed") || strings.HasPrefix(n, "vector search unavailable") {
			return true
		}
	}
	return false
}
