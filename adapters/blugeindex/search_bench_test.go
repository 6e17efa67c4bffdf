package blugeindex

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/blugelabs/bluge"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/test/perf/synth"
)

// scaleX is the index of BenchmarkScaleSearch, loaded once per process.
var (
	scaleOnce sync.Once
	scaleX    *Index
)

// BenchmarkScaleSearch compares the two ways of finding candidates on
// SCALE_N (default 100,000) synthetic resources loaded straight into the
// index (test/perf/synth, seed 1, in batches of 10,000 as a rebuild does):
// bluge's full scoring (the reference) and the pruned top-k Search uses,
// and the count of matches by visiting them or by bitmaps. Each iteration
// is one query of the 12 of test/perf/scale.sh in turn (Swedish); p50 and
// p99 are over the iterations. Three rounds of each variant in turn, on
// one load:
//
//	SCALE_N=100000 go test -run '^$' -bench ScaleSearch -benchtime 600x -timeout 60m ./adapters/blugeindex/
func BenchmarkScaleSearch(b *testing.B) {
	n := synth.Size(b, "SCALE_N", 100000)
	scaleOnce.Do(func() {
		start := time.Now()
		x, err := New()
		if err != nil {
			b.Fatal(err)
		}
		const chunk = 10000
		for from := 0; from < n; from += chunk {
			if err := x.Upsert(context.Background(), synthResources(b, from, min(chunk, n-from))); err != nil {
				b.Fatal(err)
			}
		}
		scaleX = x
		runtime.GC() // the load's garbage, not the searches'
		b.Logf("loaded %d resources in %.1f s", n, time.Since(start).Seconds())
	})
	ctx := context.Background()
	x := scaleX
	// Rounds of each variant in turn: a noisy neighbour then weighs on both.
	for round := 1; round <= 3; round++ {
		for _, v := range []struct {
			name string
			run  func(r *bluge.Reader, p *plan, lex *lexicon) error
		}{
			// Search's candidates, as core/search asks for a first page
			// (limit 20), found both ways.
			{"search-full", func(r *bluge.Reader, p *plan, lex *lexicon) error {
				_, err := fullCandidates(ctx, r, p, lex, rerankDepth)
				return err
			}},
			{"search-pruned", func(r *bluge.Reader, p *plan, lex *lexicon) error {
				_, err := topK(ctx, r, p, lex, rerankDepth)
				return err
			}},
			// The total of a page (Count), both ways.
			{"count-visit", func(r *bluge.Reader, p *plan, _ *lexicon) error {
				_, err := countByVisit(ctx, r, p)
				return err
			}},
			{"count-bitmaps", func(r *bluge.Reader, p *plan, _ *lexicon) error {
				_, err := countMatches(ctx, r, p)
				return err
			}},
			// What a hybrid search asks of the index: the count, then the
			// whole match set ranked up to core.MaxMatchSet.
			{"whole-set", func(r *bluge.Reader, p *plan, lex *lexicon) error {
				n, err := countMatches(ctx, r, p)
				if err != nil {
					return err
				}
				_, err = topK(ctx, r, p, lex, max(20, min(n, core.MaxMatchSet)))
				return err
			}},
		} {
			b.Run(fmt.Sprintf("round%d/%s", round, v.name), func(b *testing.B) {
				timeQueries(b, func(q core.TextQuery) error { return x.withPlan(q, v.run) })
			})
		}
		// A full-text page as core/search asks for it: Search (limit 20)
		// and Count, through the index's methods.
		b.Run(fmt.Sprintf("round%d/page", round), func(b *testing.B) {
			timeQueries(b, func(q core.TextQuery) error {
				if _, err := x.Search(ctx, q); err != nil {
					return err
				}
				_, err := x.Count(ctx, q)
				return err
			})
		})
	}
}

// withPlan runs fn on the index's reader and the plan of q, as Search and
// Count do.
func (x *Index) withPlan(q core.TextQuery, fn func(r *bluge.Reader, p *plan, lex *lexicon) error) error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	text := core.CleanText(q.Text)
	return fn(x.reader, planQuery(analyzeQuery(text, x.lex), x.lex, text, q.Lang, q.Catalogs), x.lex)
}

// timeQueries runs one query per iteration, the scale queries in turn, and
// reports the median and 99th percentile.
func timeQueries(b *testing.B, run func(q core.TextQuery) error) {
	var took []time.Duration
	i := 0
	for b.Loop() {
		q := core.TextQuery{Text: scaleQueries[i%len(scaleQueries)], Lang: core.Swedish, Limit: 20}
		start := time.Now()
		if err := run(q); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
		i++
	}
	reportPercentiles(b, took)
}

// reportPercentiles reports the median and 99th percentile of the times.
func reportPercentiles(b *testing.B, took []time.Duration) {
	if len(took) == 0 {
		return
	}
	slices.Sort(took)
	at := func(p float64) float64 {
		return float64(took[min(len(took)-1, int(p*float64(len(took))))]) / 1e6
	}
	b.ReportMetric(at(0.5), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}

// BenchmarkRealCatalogSearch compares both ways of finding candidates on
// the real catalog (235 resources), where most traffic goes: each
// iteration is one query of the dev golden set in turn, as Search runs it
// (analysis, candidates, rerank); three rounds of each in turn.
//
//	go test -run '^$' -bench RealCatalogSearch -benchtime 20000x ./adapters/blugeindex/
func BenchmarkRealCatalogSearch(b *testing.B) {
	x := newIndex(b, loadCatalog(b))
	golden := loadGolden(b)
	ctx := context.Background()
	for round := 1; round <= 3; round++ {
		for _, v := range []struct {
			name string
			find finder
		}{{"full", fullCandidates}, {"pruned", topK}} {
			b.Run(fmt.Sprintf("round%d/%s", round, v.name), func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					g := golden[i%len(golden)]
					if _, err := x.search(ctx, core.TextQuery{Text: g.Q, Lang: g.Lang, Limit: 20}, v.find); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}
