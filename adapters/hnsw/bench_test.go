package hnsw

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Run: go test -run '^$' -bench . -benchtime=200x ./adapters/hnsw/
//
// Each set is built once per process and shared by the benchmarks that
// need it; building is not timed in ns/op but reported as vectors/s.

const benchQueries = 100

// benchSet is a data set with its queries and their true top 10.
type benchSet struct {
	n    int
	gen  func(*rand.Rand, int) [][]float32
	seed uint64

	dataOnce sync.Once
	vs, qs   [][]float32
	truth    [][]Result

	graphOnce sync.Once
	graph     *Index
	rate      float64 // vectors/s of the build by GOMAXPROCS goroutines
	seqRate   float64 // vectors/s of a build by one goroutine, when measured
	measure1  bool    // whether to measure seqRate too
}

var (
	skewed10k  = &benchSet{n: 10_000, gen: skewedVecs, seed: 10, measure1: true}
	uniform10k = &benchSet{n: 10_000, gen: uniformVecs, seed: 11}
	skewed100k = &benchSet{n: 100_000, gen: skewedVecs, seed: 100}
)

func (s *benchSet) data() {
	s.dataOnce.Do(func() {
		r := rand.New(rand.NewPCG(s.seed, s.seed))
		s.vs, s.qs = s.gen(r, s.n), s.gen(r, benchQueries)
		// The truth is float32's, so recall counts the int8 rounding too.
		for _, q := range s.qs {
			s.truth = append(s.truth, exactFloat(s.vs, q, 10))
		}
	})
}

// flatIndex holds vs without a graph: enough for Exact, and quick.
func flatIndex(vs [][]float32) *Index {
	x := New(dim, Options{})
	x.grow(len(vs))
	for i, v := range vs {
		codes := make([]int8, dim)
		x.alloc(idOf(i), 0, codes, quantize(v, codes))
		x.state[i] = live
	}
	x.live.Store(int64(len(vs)))
	return x
}

func (s *benchSet) index(b *testing.B) *Index {
	b.StopTimer()
	defer b.StartTimer()
	s.data()
	s.graphOnce.Do(func() {
		if s.measure1 {
			start := time.Now()
			parallelBuild(b, New(dim, Options{ExactBelow: -1}), s.vs, 1)
			s.seqRate = float64(s.n) / time.Since(start).Seconds()
		}
		s.graph = New(dim, Options{ExactBelow: -1})
		start := time.Now()
		parallelBuild(b, s.graph, s.vs, runtime.GOMAXPROCS(0))
		s.rate = float64(s.n) / time.Since(start).Seconds()
	})
	return s.graph
}

// parallelBuild adds vs from the given number of goroutines.
func parallelBuild(b *testing.B, x *Index, vs [][]float32, workers int) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(vs); i = int(next.Add(1)) - 1 {
				if err := x.Add(idOf(i), vs[i]); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func (s *benchSet) recall(x *Index) float64 {
	var hit int
	for i, q := range s.qs {
		got := x.Search(q, 10)
		for _, w := range s.truth[i] {
			if slices.ContainsFunc(got, func(r Result) bool { return r.ID == w.ID }) {
				hit++
			}
		}
	}
	return float64(hit) / float64(10*len(s.qs))
}

// dotsPerQuery counts the similarities the graph search computes.
func (s *benchSet) dotsPerQuery(x *Index) float64 {
	c := new(searchCtx)
	x.mu.RLock()
	defer x.mu.RUnlock()
	for _, q := range s.qs {
		x.search(c, q, 10)
	}
	return float64(c.dots) / float64(len(s.qs))
}

// benchSearch times Search at several beam widths, default first.
func benchSearch(b *testing.B, s *benchSet) {
	x := s.index(b)
	for _, ef := range []int{DefaultEfSearch, 64, 256} {
		b.Run(fmt.Sprintf("ef=%d", ef), func(b *testing.B) {
			x.efS = ef
			defer func() { x.efS = DefaultEfSearch }()
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				x.Search(s.qs[i%len(s.qs)], 10)
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(s.recall(x), "recall@10")
			b.ReportMetric(s.dotsPerQuery(x), "dots/query")
			b.ReportMetric(s.rate, "vectors/s")
			if s.seqRate > 0 {
				b.ReportMetric(s.seqRate, "vectors/s-1goroutine")
			}
		})
	}
}

func BenchmarkSearch10k(b *testing.B) {
	b.Run("skewed", func(b *testing.B) { benchSearch(b, skewed10k) })
	b.Run("uniform", func(b *testing.B) { benchSearch(b, uniform10k) })
}

// BenchmarkSearch100k runs on skewed vectors only: a graph on 100,000
// uniform ones takes over ten minutes to build, to be searched no faster
// than Exact at the recall asked for.
func BenchmarkSearch100k(b *testing.B) { benchSearch(b, skewed100k) }

func benchExact(b *testing.B, s *benchSet) {
	b.StopTimer()
	s.data()
	x := flatIndex(s.vs)
	b.StartTimer()
	for i := range b.N {
		x.Exact(s.qs[i%len(s.qs)], 10)
	}
}

func BenchmarkExact10k(b *testing.B)  { benchExact(b, skewed10k) }
func BenchmarkExact100k(b *testing.B) { benchExact(b, skewed100k) }

// BenchmarkCrossover times graph search (default options) against Exact
// at growing sizes: DefaultExactBelow is where the graph starts winning.
func BenchmarkCrossover(b *testing.B) {
	for _, kind := range []struct {
		name string
		gen  func(*rand.Rand, int) [][]float32
	}{{"skewed", skewedVecs}, {"uniform", uniformVecs}} {
		r := rand.New(rand.NewPCG(20, 20))
		all, qs := kind.gen(r, 8000), kind.gen(r, benchQueries)
		x := New(dim, Options{ExactBelow: -1})
		for _, n := range []int{1000, 2000, 3000, 4000, 6000, 8000} {
			for i := x.Len(); i < n; i++ {
				if err := x.Add(idOf(i), all[i]); err != nil {
					b.Fatal(err)
				}
			}
			b.Run(fmt.Sprintf("%s/n=%d/graph", kind.name, n), func(b *testing.B) {
				for i := range b.N {
					x.Search(qs[i%len(qs)], 10)
				}
				b.StopTimer()
				b.ReportMetric(recallAt(x, qs, 10), "recall@10")
			})
			b.Run(fmt.Sprintf("%s/n=%d/exact", kind.name, n), func(b *testing.B) {
				for i := range b.N {
					x.Exact(qs[i%len(qs)], 10)
				}
			})
		}
	}
}

// BenchmarkSearchWhileWriting times searches on 10,000 vectors while one
// goroutine replaces vectors non-stop (so tombstones and vacuums too): it
// shows whether writers starve readers.
func BenchmarkSearchWhileWriting(b *testing.B) {
	s := skewed10k
	b.StopTimer()
	s.data()
	x := New(dim, Options{ExactBelow: -1})
	parallelBuild(b, x, s.vs, runtime.GOMAXPROCS(0))
	fresh := skewedVecs(rand.New(rand.NewPCG(30, 30)), 1000)
	stop := make(chan struct{})
	var writes atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := x.Add(idOf(i*7%s.n), fresh[i%len(fresh)]); err != nil {
				b.Error(err)
				return
			}
			writes.Add(1)
		}
	})
	lat := make([]time.Duration, 0, b.N)
	b.StartTimer()
	began := time.Now()
	for i := range b.N {
		start := time.Now()
		x.Search(s.qs[i%len(s.qs)], 10)
		lat = append(lat, time.Since(start))
	}
	elapsed := time.Since(began)
	b.StopTimer()
	close(stop)
	wg.Wait()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
	b.ReportMetric(float64(writes.Load())/elapsed.Seconds(), "writes/s")
}
