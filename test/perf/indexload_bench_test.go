package perf

import (
	"context"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/climatesearch/climatesearch/adapters/blugeindex"
	"github.com/climatesearch/climatesearch/test/perf/synth"
	"github.com/climatesearch/climatesearch/test/shareddata"
)

// BenchmarkIndexLoad times what a restart spends on the full-text index:
// SCALE_N (default 100,000) synthetic resources (test/perf/synth, seed 1)
// upserted into an empty in-memory index in chunks of 10,000, as
// ingest.Service.Rebuild does. With HEAP_OUT=FILE it writes a heap profile
// of the loaded index (after a GC, before Close):
//
//	SCALE_N=100000 HEAP_OUT=/tmp/il.heap go test -run '^$' -bench IndexLoad -benchtime 1x -timeout 20m ./test/perf/
//	go tool pprof -sample_index=inuse_space -top /tmp/il.heap
func BenchmarkIndexLoad(b *testing.B) {
	n := synth.Size(b, "SCALE_N", 100000)
	gen, err := synth.New(shareddata.Root(b), 1)
	if err != nil {
		b.Fatal(err)
	}
	rs, err := gen.Resources(0, n)
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	for b.Loop() {
		x, err := blugeindex.New()
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < n; i += 10000 {
			if err := x.Upsert(context.Background(), rs[i:min(n, i+10000)]); err != nil {
				b.Fatal(err)
			}
		}
		if f := os.Getenv("HEAP_OUT"); f != "" {
			runtime.GC()
			w, err := os.Create(f)
			if err != nil {
				b.Fatal(err)
			}
			if err := pprof.WriteHeapProfile(w); err != nil {
				b.Fatal(err)
			}
			w.Close()
		}
		x.Close()
	}
}
