package blugeindex

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
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
	// SCALE_ONLY=hybrid,page runs only the variants whose names hold one
	// of these.
	skip := func(name string) bool {
		only := os.Getenv("SCALE_ONLY")
		if only == "" {
			return false
		}
		for _, o := range strings.Split(only, ",") {
			if strings.Contains(name, o) {
				return false
			}
		}
		return true
	}
	vecs := map[string][]core.Key{}
	for _, text := range scaleQueries {
		q := core.TextQuery{Text: text, Lang: core.Swedish, Limit: core.MaxMatchSet}
		list, err := x.Search(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		var ks []core.Key
		for _, i := range []int{25, 30, 45, 60, 100, 200, 400, 800, 1600, 3200, 6400, 9000} {
			if i < len(list) {
				ks = append(ks, list[i].Key)
			}
		}
		for i := len(ks); i < 20; i++ {
			ks = append(ks, core.Key{Catalog: core.National, ID: fmt.Sprint(synth.FirstID + 7919*i)})
		}
		vecs[text] = ks
	}
	// With SCALE_PER_QUERY=1, what each query's lists hold: the postings
	// accumulation would read (lists outside the block cache counted at
	// its minimum) and the documents matching.
	if os.Getenv("SCALE_PER_QUERY") != "" {
		for _, text := range scaleQueries {
			err := x.withPlan(core.TextQuery{Text: text, Lang: core.Swedish}, func(r *bluge.Reader, p *plan, lex *lexicon) error {
				snap, err := snapshotOf(ctx, r)
				if err != nil {
					return err
				}
				cs, err := openCursors(snap, p, lex, &x.blocks)
				defer closeCursors(cs)
				if err != nil {
					return err
				}
				postings, short := uint64(0), 0
				for _, c := range cs {
					if c.bl == nil {
						short++
					} else {
						postings += c.bl.postings()
					}
				}
				n, err := countMatches(ctx, r, p)
				fmt.Fprintf(os.Stderr, "scale: %q: %d clauses, %d cursors (%d short), %d postings in the cache, %d matches\n", text, len(p.clauses), len(cs), short, postings, n)
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	// The first RankedPrefix reads the ids of every segment (keycache.go).
	start := time.Now()
	if _, _, _, _, err := x.RankedPrefix(ctx, core.TextQuery{Text: scaleQueries[0], Lang: core.Swedish, Limit: core.MaxMatchSet}, 40, nil); err != nil {
		b.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "scale: the first RankedPrefix took %.2f s\n", time.Since(start).Seconds())
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
			// The same with block-max postings (blocks.go), as Search.
			{"search-pruned-blockmax", func(r *bluge.Reader, p *plan, lex *lexicon) error {
				_, err := x.blockTopK(ctx, r, p, lex, rerankDepth)
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
			if skip(v.name) {
				continue
			}
			b.Run(fmt.Sprintf("round%d/%s", round, v.name), func(b *testing.B) {
				timeQueries(b, func(q core.TextQuery) error { return x.withPlan(q, v.run) })
			})
		}
		// What a hybrid search asked of the index before (the count, then
		// the whole list up to core.MaxMatchSet, rescored) and asks now
		// (the list's first 40 entries, the places of 20 vector hits and
		// the count beside; stand-ins here: entries of the list from rank
		// 25 to 9,000 and ids that do not match), through the index's
		// methods. The store reads and fusion of core/search are not in
		// these: core/search's BenchmarkScaleSearch has them.
		hybridPrefix := func(q core.TextQuery, vecs []core.Key) error {
			q.Limit = core.MaxMatchSet
			_, _, _, _, err := x.RankedPrefix(ctx, q, 40, vecs)
			return err
		}
		for _, v := range []struct {
			name string
			run  func(q core.TextQuery, vecs []core.Key) error
		}{
			{"hybrid-whole", func(q core.TextQuery, _ []core.Key) error {
				n, err := x.Count(ctx, q)
				if err != nil {
					return err
				}
				q.Limit = max(20, min(n, core.MaxMatchSet))
				_, err = x.Search(ctx, q)
				return err
			}},
			{"hybrid-prefix-noblocks", func(q core.TextQuery, vecs []core.Key) error {
				x.blocks.off = true
				defer func() { x.blocks.off = false }()
				return hybridPrefix(q, vecs)
			}},
			{"hybrid-prefix", hybridPrefix},
			{"hybrid-prefix-walk", func(q core.TextQuery, vecs []core.Key) error {
				accumulation = accumulateNever
				defer func() { accumulation = accumulateWhenCheaper }()
				return hybridPrefix(q, vecs)
			}},
			{"hybrid-prefix-unshared", func(q core.TextQuery, vecs []core.Key) error {
				halfBoundOff = true
				defer func() { halfBoundOff = false }()
				return hybridPrefix(q, vecs)
			}},
		} {
			if skip(v.name) {
				continue
			}
			b.Run(fmt.Sprintf("round%d/%s", round, v.name), func(b *testing.B) {
				timeQueries(b, func(q core.TextQuery) error { return v.run(q, vecs[q.Text]) })
			})
		}
		// The deep list alone (core.MaxMatchSet best by BM25, as placeKeys
		// walks when a vector hit lies deep), by the walk and by
		// accumulation, and as chosen.
		for _, v := range []struct {
			name string
			mode int
		}{{"deep-walk", accumulateNever}, {"deep-acc", accumulateAlways}, {"deep-auto", accumulateWhenCheaper}} {
			if skip(v.name) {
				continue
			}
			b.Run(fmt.Sprintf("round%d/%s", round, v.name), func(b *testing.B) {
				accumulation = v.mode
				defer func() { accumulation = accumulateWhenCheaper }()
				timeQueries(b, func(q core.TextQuery) error {
					return x.withPlan(q, func(r *bluge.Reader, p *plan, lex *lexicon) error {
						snap, err := snapshotOf(ctx, r)
						if err != nil {
							return err
						}
						_, _, err = bestByBM25(ctx, snap, p, lex, core.MaxMatchSet, &x.blocks, math.Inf(-1), x.splitFrom())
						return err
					})
				})
			})
		}
		// A full-text page as core/search asks for it: Search (limit 20)
		// and Count, through the index's methods; page-pruned without the
		// block cache (as before it).
		for _, v := range []struct {
			name          string
			off, unshared bool
		}{{"page-pruned", true, false}, {"page", false, false}, {"page-unshared", false, true}} {
			if skip(v.name) {
				continue
			}
			b.Run(fmt.Sprintf("round%d/%s", round, v.name), func(b *testing.B) {
				x.blocks.off, halfBoundOff = v.off, v.unshared
				defer func() { x.blocks.off, halfBoundOff = false, false }()
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
	st := x.blocks.stats()
	fmt.Fprintf(os.Stderr, "scale: block cache %d pieces, %d postings, %.1f MiB\n", st.Pieces, st.Postings, float64(st.Bytes)/(1<<20))
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
	if os.Getenv("SCALE_PER_QUERY") != "" && len(took) >= len(scaleQueries) {
		line := b.Name() + " medians (ms):"
		for qi, text := range scaleQueries {
			var own []time.Duration
			for j := qi; j < len(took); j += len(scaleQueries) {
				own = append(own, took[j])
			}
			slices.Sort(own)
			line += fmt.Sprintf(" %s %.2f", text, float64(own[len(own)/2])/1e6)
		}
		fmt.Fprintln(os.Stderr, "scale:", line)
	}
	reportPercentiles(b, took) // sorts took
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
		}{{"full", fullCandidates}, {"pruned", topK}, {"blockmax", x.blockTopK}} {
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

// BenchmarkRanked times the cut of a candidate list whose depth-th score is
// held by most of it, as a word most of a large catalog holds gives:
// RANKED_N (default 1,000,000) candidates in three scores, depth 50.
//
//	go test -run '^$' -bench Ranked -count 3 ./adapters/blugeindex/
func BenchmarkRanked(b *testing.B) {
	n := synth.Size(b, "RANKED_N", 1000000)
	cands := make([]scoredDoc, n)
	ids := make([]string, n)
	for i := range cands {
		cands[i] = scoredDoc{doc: uint64(i), score: float64(1 + (i*7919)%3)}
		ids[i] = fmt.Sprintf("dkbr:G%07d", (i*104729)%n)
	}
	id := func(doc uint64) (string, error) { return ids[doc], nil }
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ranked(cands, 50, id); err != nil {
			b.Fatal(err)
		}
	}
}
