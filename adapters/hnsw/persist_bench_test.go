package hnsw

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
	"github.com/climatesearch/climatesearch/test/perf/synth"
)

// BenchmarkKeptGraph measures what a restart costs with and without the
// kept graph: KEPT_N skewed vectors (default 100,000) are built once into
// a CatalogIndex as Boot builds it (UpsertMany, both cores), then each
// iteration persists the graph (persist-s, the file's MB), takes it up
// (open + Resume, load-s, checked to answer the same), and, with
// KEPT_REBUILD=1, rebuilds it from the vectors as Boot did before
// (rebuild-s), so the variants take turns:
//
//	KEPT_N=100000 KEPT_REBUILD=1 go test -run '^$' -bench KeptGraph -benchtime 3x -timeout 2h ./adapters/hnsw/
//
// The medians of the per-iteration times are reported; ns/op means
// nothing here.
func BenchmarkKeptGraph(b *testing.B) {
	n := 100000
	if s := os.Getenv("KEPT_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	rebuild := os.Getenv("KEPT_REBUILD") == "1"
	r := rand.New(rand.NewPCG(1, 2))
	vs := skewedVecs(r, n)
	qs := skewedVecs(r, 20)
	rows := make([]ports.StoredVector, n)
	for i, v := range vs {
		rows[i] = ports.StoredVector{Key: core.Key{Catalog: core.National, ID: strconv.Itoa(6000000000 + i)}, Vec: v}
	}
	ctx := context.Background()
	// One directory for every run of the benchmark (it runs with b.N 1
	// first, and the graph is built once).
	if keptBench.dir == "" {
		dir, err := os.MkdirTemp("", "keptgraph")
		if err != nil {
			b.Fatal(err)
		}
		keptBench.dir = dir
	}
	path := filepath.Join(keptBench.dir, "vectors.snap")
	if err := os.MkdirAll(keptBench.dir, 0o755); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(keptBench.dir) }() // made again by the next run
	buildOnce := func() (*CatalogIndex, time.Duration) {
		c, err := OpenCatalogIndex(dim, path)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		t := time.Now()
		if _, err := c.UpsertMany(ctx, rows); err != nil {
			b.Fatal(err)
		}
		return c, time.Since(t)
	}
	// Built once whatever b.N (the benchmark runs with 1 first).
	if keptBench.c == nil || keptBench.n != n {
		keptBench.c, keptBench.first = buildOnce()
		keptBench.n = n
		b.Logf("built %d vectors in %.1f s", n, keptBench.first.Seconds())
	}
	c, first := keptBench.c, keptBench.first
	defer func() { keptBench.c = c }()
	want := answers(b, c, qs)
	var persists, loads, rebuilds []float64
	var size int64
	b.ResetTimer()
	for range b.N {
		runtime.GC()
		t := time.Now()
		if err := c.Persist(ctx, "bench", "m"); err != nil {
			b.Fatal(err)
		}
		persists = append(persists, time.Since(t).Seconds())
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		size = fi.Size()
		c = nil
		runtime.GC()
		t = time.Now()
		d, err := OpenCatalogIndex(dim, path)
		if err != nil {
			b.Fatal(err)
		}
		if ok, err := d.Resume(ctx, "bench", "m"); !ok || err != nil {
			b.Fatalf("Resume: %v %v", ok, err)
		}
		loads = append(loads, time.Since(t).Seconds())
		if got := answers(b, d, qs); got != want {
			b.Fatal("the graph taken up answers differently")
		}
		c = d
		if rebuild {
			_, took := buildOnce()
			rebuilds = append(rebuilds, took.Seconds())
			runtime.GC()
		}
		b.Logf("persist %.2f s, load %.2f s, rebuild %v", persists[len(persists)-1], loads[len(loads)-1], rebuilds)
	}
	b.ReportMetric(median(persists), "persist-s")
	b.ReportMetric(median(loads), "load-s")
	b.ReportMetric(float64(size)/1e6, "MB")
	if rebuild {
		b.ReportMetric(median(rebuilds), "rebuild-s")
	} else {
		b.ReportMetric(first.Seconds(), "build-s")
	}
}

var keptBench struct {
	dir   string
	n     int
	c     *CatalogIndex
	first time.Duration
}

func answers(b *testing.B, c *CatalogIndex, qs [][]float32) string {
	var s []byte
	for _, q := range qs {
		res, err := c.Search(context.Background(), q, nil, 10)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res {
			s = append(s, r.Key.ID...)
			s = strconv.AppendFloat(s, r.Score, 'g', -1, 64)
		}
	}
	return string(s)
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// BenchmarkResumeFile times taking up a graph a service kept at a clean
// stop: GRAPH_FILE is DATA_DIR/index/vectors.snap (copy it first, a start
// removes it). Each iteration links the file where OpenCatalogIndex looks
// and takes it up under the mark and embedder its header names; cpu-ms/op
// is the process's user and system time of the Resume.
//
//	GRAPH_FILE=/tmp/vectors.snap go test -run '^$' -bench ResumeFile -benchtime 3x ./adapters/hnsw/
func BenchmarkResumeFile(b *testing.B) {
	src := os.Getenv("GRAPH_FILE")
	if src == "" {
		b.Skip("GRAPH_FILE is not set")
	}
	f, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	fi, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	r := newSnapReader(f, fi.Size())
	h := readHeader(r)
	_ = f.Close()
	if r.err != nil {
		b.Fatal(r.err)
	}
	path := filepath.Join(b.TempDir(), "vectors.snap")
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		if err := os.Link(src, path); err != nil {
			b.Fatal(err)
		}
		c, err := OpenCatalogIndex(h.dim, path)
		if err != nil {
			b.Fatal(err)
		}
		c0 := synth.CPUTime()
		b.StartTimer()
		ok, err := c.Resume(context.Background(), h.embedder, h.mark)
		cpu += synth.CPUTime() - c0
		if !ok || err != nil {
			b.Fatalf("taken up: %v, %v", ok, err)
		}
	}
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
}
