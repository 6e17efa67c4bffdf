package blugeindex

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
)

// scaleX is the index of BenchmarkScaleSearch, loaded once per process.
var (
	scaleOnce sync.Once
	scaleX    *Index
)

// BenchmarkScaleSearch compares the two ways of finding candidates on
// SCALE_N (default 100,000) synthetic resources loaded straight into the
// index (test/perf/synth, seed 1, in batches of 10,000 as a rebuild does):
// bluge's full scoring (the reference) and the pruned top-k Search uses.
// Each iteration is one search of the 12 queries of test/perf/scale.sh in
// turn (Swedish, limit 20: what core/search asks for a first page); p50
// and p99 are over the iterations. Three rounds of each variant in turn, on
// one load:
//
//	SCALE_N=100000 go test -run '^$' -bench ScaleSearch -benchtime 600x -timeout 60m ./adapters/blugeindex/
func BenchmarkScaleSearch(b *testing.B) {
	n := 100000
	if s := os.Getenv("SCALE_N"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			b.Fatalf("SCALE_N=%q", s)
		}
		n = v
	}
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
		b.Logf("loaded %d resources in %.1f s", n, time.Since(start).Seconds())
	})
	ctx := context.Background()
	// Rounds of each variant in turn: a noisy neighbour then weighs on both.
	for round := 1; round <= 3; round++ {
		for _, v := range []struct {
			name string
			find finder
		}{{"full", fullCandidates}, {"pruned", topK}} {
			b.Run(fmt.Sprintf("round%d/search-%s", round, v.name), func(b *testing.B) {
				timeQueries(b, func(q core.TextQuery) error {
					_, err := scaleX.search(ctx, q, v.find)
					return err
				})
			})
		}
		b.Run(fmt.Sprintf("round%d/count", round), func(b *testing.B) {
			timeQueries(b, func(q core.TextQuery) error {
				_, err := scaleX.Count(ctx, q)
				return err
			})
		})
	}
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
