package hnsw

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"
)

// BenchmarkBuild builds a fresh graph per iteration from the vectors of the
// search benchmarks and reports the build rate, then the recall@10 and the
// query p50 of that graph at EfSearch 64, 128 and 256 (one goroutine,
// 5 rounds of the 100 queries). Run one size at a time, e.g.
//
//	go test -run '^$' -bench 'Build/10k' -benchtime 1x ./adapters/hnsw/
//	go test -run '^$' -bench 'Build/100k' -benchtime 1x -timeout 1h ./adapters/hnsw/
//
// The modes: add-1 and add-2 call Add from one and from two goroutines;
// batch (batch_test.go) calls AddBatch, which uses GOMAXPROCS goroutines.
// This file runs as it is against an older commit's package too
// (test/hnswlib/compare.sh with BASE=<commit>), hence batch elsewhere.
func BenchmarkBuild(b *testing.B) {
	for _, set := range []struct {
		name string
		s    *benchSet
	}{{"10k", skewed10k}, {"100k", skewed100k}} {
		for _, mode := range buildModes {
			b.Run(set.name+"/"+mode.name, func(b *testing.B) {
				b.StopTimer()
				set.s.data()
				var x *Index
				var took time.Duration
				for range b.N {
					x = New(dim, Options{ExactBelow: -1})
					runtime.GC()
					start := time.Now()
					mode.build(b, x, set.s.vs)
					took += time.Since(start)
				}
				b.ReportMetric(float64(b.N*set.s.n)/took.Seconds(), "vectors/s")
				for _, ef := range []int{64, 128, 256} {
					x.efS = ef
					p50, recall := queryStats(x, set.s)
					b.ReportMetric(float64(p50.Microseconds()), fmt.Sprintf("p50-µs-ef%d", ef))
					b.ReportMetric(recall, fmt.Sprintf("recall-ef%d", ef))
				}
			})
		}
	}
}

var buildModes = []struct {
	name  string
	build func(*testing.B, *Index, [][]float32)
}{
	{"add-1", func(b *testing.B, x *Index, vs [][]float32) { parallelBuild(b, x, vs, 1) }},
	{"add-2", func(b *testing.B, x *Index, vs [][]float32) { parallelBuild(b, x, vs, 2) }},
}

// queryStats returns the median latency of Search over 5 rounds of the
// set's queries, and the recall@10 against the exact answers.
func queryStats(x *Index, s *benchSet) (time.Duration, float64) {
	lat := make([]time.Duration, 0, 5*len(s.qs))
	for range 5 {
		for _, q := range s.qs {
			start := time.Now()
			x.Search(q, 10)
			lat = append(lat, time.Since(start))
		}
	}
	slices.Sort(lat)
	return lat[len(lat)/2], s.recall(x)
}
