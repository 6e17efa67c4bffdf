package hnsw

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkBuild builds a graph from the vectors of the search benchmarks
// in each mode and reports the build rate, then the recall@10 and the
// query p50 of that graph at EfSearch 64, 128 and 256 (one goroutine,
// 5 rounds of the 100 queries). It builds once per mode and size whatever
// b.N is, so -benchtime=200x (section 7 of docs/PERFORMANCE.md) costs one
// build each too; ns/op means nothing here. One size at a time:
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
			var once sync.Once
			var metrics [][2]any
			b.Run(set.name+"/"+mode.name, func(b *testing.B) {
				once.Do(func() {
					set.s.data()
					x := New(dim, Options{ExactBelow: -1})
					runtime.GC()
					start := time.Now()
					mode.build(b, x, set.s.vs)
					took := time.Since(start)
					metrics = append(metrics, [2]any{float64(set.s.n) / took.Seconds(), "vectors/s"})
					for _, ef := range []int{64, 128, 256} {
						x.efS = ef
						p50, recall := queryStats(x, set.s)
						metrics = append(metrics,
							[2]any{float64(p50.Microseconds()), fmt.Sprintf("p50-µs-ef%d", ef)},
							[2]any{recall, fmt.Sprintf("recall-ef%d", ef)})
					}
				})
				b.ReportMetric(0, "ns/op")
				for _, m := range metrics {
					b.ReportMetric(m[0].(float64), m[1].(string))
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
