package search_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/adapters/badgerstore"
	"github.com/climatesearch/climatesearch/adapters/blugeindex"
	"github.com/climatesearch/climatesearch/adapters/embedder"
	"github.com/climatesearch/climatesearch/adapters/hnsw"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/embedding"
	"github.com/climatesearch/climatesearch/core/search"
	"github.com/climatesearch/climatesearch/ports"
	"github.com/climatesearch/climatesearch/test/perf/synth"
	"github.com/climatesearch/climatesearch/test/shareddata"
)

// scaleQueries are the queries test/perf/scale.sh cycles over.
var scaleQueries = []string{"spånskiva", "betong C30/37", "glasull", "gipsskiva", "plywood", "mineralull",
	"armeringsstål", "concrete", "insulation", "fönster", "tegel", "diesel"}

// noVectors is a VectorStore that keeps nothing: the benchmark times
// searches, not the vectors' storage.
type noVectors struct{}

func (noVectors) PutVectors(context.Context, string, []ports.StoredVector) error { return nil }
func (noVectors) ScanVectors(context.Context, string, func(ports.StoredVector) error) error {
	return nil
}
func (noVectors) DropVectorsExcept(context.Context, string) (int, error) { return 0, nil }

// scaleService loads SCALE_N (default 100,000) synthetic national
// resources (test/perf/synth, seed 1) into a badger store in a temporary
// directory, the bluge index (in memory) and the HNSW (hash embedder, both
// cores), and returns the search service over them, with the fusion
// settings the binary uses for the hash embedder (weight 0.5, floor 0.30).
func scaleService(b *testing.B) *search.Service {
	{
		n := synth.Size(b, "SCALE_N", 100000)
		gen, err := synth.New(shareddata.Root(b), 1)
		if err != nil {
			b.Fatal(err)
		}
		dir, err := os.MkdirTemp("", "scale-search-")
		if err != nil {
			b.Fatal(err)
		}
		st, err := badgerstore.Open(dir, nil)
		if err != nil {
			b.Fatal(err)
		}
		ix, err := blugeindex.New()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			st.Close()
			ix.Close()
			os.RemoveAll(dir)
		})
		ctx := context.Background()
		vec := embedding.New(embedder.NewHash(), noVectors{}, hnsw.NewCatalogIndex(ports.EmbeddingDim), st, slog.New(slog.DiscardHandler))
		start := time.Now()
		var took time.Duration
		const chunk = 10000
		for from := 0; from < n; from += chunk {
			rs, err := gen.Resources(from, min(chunk, n-from))
			if err != nil {
				b.Fatal(err)
			}
			puts := make([]ports.StoredResource, len(rs))
			for i := range rs {
				puts[i] = ports.StoredResource{Resource: rs[i], Hash: core.ContentHash(&rs[i])}
			}
			if err := st.Apply(ctx, core.National, ports.Changes{Put: puts}); err != nil {
				b.Fatal(err)
			}
			if err := ix.Upsert(ctx, rs); err != nil {
				b.Fatal(err)
			}
			t := time.Now()
			if _, err := vec.Update(ctx, rs, nil); err != nil {
				b.Fatal(err)
			}
			took += time.Since(t)
			if (from+chunk)%100000 == 0 {
				fmt.Fprintf(os.Stderr, "scale-search: %d loaded in %.1f s (vectors %.1f s)\n", from+chunk, time.Since(start).Seconds(), took.Seconds())
			}
		}
		runtime.GC()
		fmt.Fprintf(os.Stderr, "scale-search: loaded %d resources in %.1f s, of which embedding and the HNSW build %.1f s (%.0f vectors/s)\n",
			n, time.Since(start).Seconds(), took.Seconds(), float64(n)/took.Seconds())
		svc := search.New(search.Config{VectorWeight: 0.5, VectorFloor: 0.30}, st, ix, core.NewVisibility(), vec, nil)
		// The first hybrid search reads the ids of every index segment
		// (blugeindex's key cache): once per segment, not per query.
		t := time.Now()
		if _, err := svc.Search(ctx, core.SearchRequest{Query: scaleQueries[0], Lang: core.Swedish, Vector: true}); err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(os.Stderr, "scale-search: first hybrid search %.2f s\n", time.Since(t).Seconds())
		return svc
	}
}

// BenchmarkScaleSearch times core/search over SCALE_N synthetic resources
// (default 100,000): a full-text page and a hybrid page (vector=true, the
// hash embedder), each iteration one of the 12 queries of scale.sh in turn
// (Swedish, limit 20); p50 and p99 over the iterations. hybrid-whole is the
// way hybrid answered before (ranking, loading and fusing the whole match
// set), hybrid the way it answers now; rounds of each variant in turn, on
// one load (built once per run: the HNSW over a million vectors takes
// minutes). With SCALE_PROFILE=DIR each variant's timed loop is profiled
// into DIR/<round>-<variant>.cpu; with SCALE_PER_QUERY=1 each query's median
// is printed too.
//
//	SCALE_N=100000 go test -run '^$' -bench ScaleSearch -benchtime 240x -timeout 60m ./core/search/
func BenchmarkScaleSearch(b *testing.B) {
	svc := scaleService(b)
	profDir := os.Getenv("SCALE_PROFILE")
	ctx := context.Background()
	for round := 1; round <= 3; round++ {
		for _, v := range []struct {
			name          string
			vector, whole bool
		}{{"fulltext", false, false}, {"hybrid-whole", true, true}, {"hybrid", true, false}} {
			b.Run(fmt.Sprintf("round%d/%s", round, v.name), func(b *testing.B) {
				restore := search.WholeHybrid(svc, v.whole)
				defer restore()
				b.ReportAllocs()
				var took []time.Duration
				byQuery := make([][]time.Duration, len(scaleQueries))
				i := 0
				if profDir != "" {
					f, err := os.Create(filepath.Join(profDir, fmt.Sprintf("round%d-%s.cpu", round, v.name)))
					if err != nil {
						b.Fatal(err)
					}
					if err := pprof.StartCPUProfile(f); err != nil {
						b.Fatal(err)
					}
					defer func() { pprof.StopCPUProfile(); f.Close() }()
				}
				cpu0 := synth.CPUTime()
				for b.Loop() {
					q := scaleQueries[i%len(scaleQueries)]
					start := time.Now()
					resp, err := svc.Search(ctx, core.SearchRequest{Query: q, Lang: core.Swedish, Vector: v.vector})
					if err != nil {
						b.Fatalf("%q: %v", q, err)
					}
					_ = resp
					took = append(took, time.Since(start))
					byQuery[i%len(scaleQueries)] = append(byQuery[i%len(scaleQueries)], took[len(took)-1])
					i++
				}
				if os.Getenv("SCALE_PER_QUERY") != "" {
					// Each query's median: which of them make the p50.
					line := fmt.Sprintf("scale-search: round%d/%s medians (ms):", round, v.name)
					for qi, ts := range byQuery {
						if len(ts) > 0 {
							slices.Sort(ts)
							line += fmt.Sprintf(" %s %.2f,", scaleQueries[qi], float64(ts[len(ts)/2])/1e6)
						}
					}
					fmt.Fprintln(os.Stderr, strings.TrimSuffix(line, ","))
				}
				// CPU of the process (both cores) per search: a search that
				// uses both cores costs more of it than its latency.
				b.ReportMetric(float64(synth.CPUTime()-cpu0)/1e6/float64(len(took)), "cpu-ms/op")
				slices.Sort(took)
				at := func(p float64) float64 {
					return float64(took[min(len(took)-1, int(p*float64(len(took))))]) / 1e6
				}
				b.ReportMetric(at(0.5), "p50-ms")
				b.ReportMetric(at(0.99), "p99-ms")
			})
		}
	}
}
