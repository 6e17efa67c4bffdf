package perf

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/adapters/blugeindex"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/test/perf/synth"
	"github.com/climatesearch/climatesearch/test/shareddata"
)

// BenchmarkIndexResume times what a restart after a clean stop spends on
// the full-text index: SCALE_N (default 100,000) synthetic resources
// (test/perf/synth, seed 1) are upserted once into an index on disk in
// chunks of 10,000 (reported as load-resources/s), the index is persisted,
// and each iteration opens it and takes it up (Open + Resume), then
// persists it again for the next. It reports the bytes on disk and the Go
// heap in use after the open. INDEX_DIR keeps the index there (a later run
// with the same SCALE_N and INDEX_DIR skips the load).
//
//	SCALE_N=100000 go test -run '^$' -bench IndexResume -benchtime 5x -timeout 60m ./test/perf/
func BenchmarkIndexResume(b *testing.B) {
	n := synth.Size(b, "SCALE_N", 100000)
	ctx := context.Background()
	dir := os.Getenv("INDEX_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	markFile := filepath.Join(dir, "bench-mark-"+strconv.Itoa(n))
	markBytes, err := os.ReadFile(markFile)
	mark := string(markBytes)
	if err != nil {
		mark = loadForResume(b, dir, n)
		if err := os.WriteFile(markFile, []byte(mark), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	// The mark is rewritten by every Persist: drop the file until the end.
	_ = os.Remove(markFile)
	var heap uint64
	var cpu, persist, persistCPU time.Duration
	for b.Loop() {
		c0 := synth.CPUTime()
		x, err := blugeindex.Open(filepath.Join(dir, "index"))
		if err != nil {
			b.Fatal(err)
		}
		ok, err := x.Resume(ctx, mark)
		if err != nil || !ok {
			b.Fatalf("Resume: %v %v", ok, err)
		}
		b.StopTimer()
		cpu += synth.CPUTime() - c0
		hits, err := x.Search(ctx, core.TextQuery{Text: "betong", Limit: 5})
		if err != nil || len(hits) == 0 {
			b.Fatalf("search after resume: %d hits, %v", len(hits), err)
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heap = ms.HeapInuse
		t, c := time.Now(), synth.CPUTime()
		mark, err = x.Persist(ctx)
		if err != nil {
			b.Fatal(err)
		}
		persist += time.Since(t)
		persistCPU += synth.CPUTime() - c
		b.StartTimer()
	}
	// CPU time (user + system, all threads) is what a busy shared machine
	// changes least.
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(persist.Milliseconds())/float64(b.N), "persist-ms/op")
	b.ReportMetric(float64(persistCPU.Milliseconds())/float64(b.N), "persist-cpu-ms/op")
	b.ReportMetric(float64(dirSize(filepath.Join(dir, "index")))/(1<<20), "disk-MiB")
	if err := os.WriteFile(markFile, []byte(mark), 0o644); err != nil {
		b.Fatal(err)
	}
}

// loadForResume builds the persisted index of n synthetic resources and
// returns its mark.
func loadForResume(b *testing.B, dir string, n int) string {
	gen, err := synth.New(shareddata.Root(b), 1)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	_ = os.RemoveAll(filepath.Join(dir, "index"))
	x, err := blugeindex.Open(filepath.Join(dir, "index"))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := x.Resume(ctx, ""); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	for from := 0; from < n; from += 10000 {
		rs, err := gen.Resources(from, min(10000, n-from))
		if err != nil {
			b.Fatal(err)
		}
		if err := x.Upsert(ctx, rs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "load-resources/s")
	t := time.Now()
	mark, err := x.Persist(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("loaded %d resources in %v, persisted in %v", n, t.Sub(start), time.Since(t))
	return mark
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}
