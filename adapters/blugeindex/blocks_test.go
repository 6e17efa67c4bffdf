package blugeindex

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/climatesearch/climatesearch/core"
)

// TestBlockCacheUnderConcurrentSearches: searches sharing a block cache
// too small for every list (pieces built, looked up and evicted side by
// side) answer as the path without the cache, and the cache keeps to its
// budget.
func TestBlockCacheUnderConcurrentSearches(t *testing.T) {
	x, rs := historyIndex(t)
	x.blocks.minLen, x.blocks.maxBytes = 1, 256<<10
	queries := probeQueries(rs, 400)
	ctx := context.Background()
	want := make([][]core.Scored, len(queries))
	for i, text := range queries {
		got, err := x.search(ctx, core.TextQuery{Text: text, Lang: core.Swedish, Limit: 20}, topK)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = got
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range queries {
				i := (k + g*7) % len(queries)
				got, err := x.Search(ctx, core.TextQuery{Text: queries[i], Lang: core.Swedish, Limit: 20})
				if err != nil {
					errs <- err.Error()
					return
				}
				if d := firstDifference(got, want[i]); d != "" {
					errs <- queries[i] + ": " + d
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	st := x.blocks.stats()
	if st.Bytes > 256<<10 || st.Pieces == 0 {
		t.Fatalf("cache holds %d bytes in %d pieces (budget 256 KiB)", st.Bytes, st.Pieces)
	}
	t.Logf("cache: %+v", st)
}

// TestSeek checks the galloping search against a scan from every start, for
// targets before, on, between and past the values.
func TestSeek(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, n := range []int{0, 1, 2, 3, 7, 64, 300} {
		a := make([]uint32, 0, n)
		v := uint32(0)
		for range n {
			v += 1 + uint32(rng.IntN(5))
			a = append(a, v)
		}
		for from := 0; from <= n; from++ {
			for x := uint32(0); x <= v+2; x++ {
				want := from
				for want < n && a[want] < x {
					want++
				}
				if got := seek(a, from, x); got != want {
					t.Fatalf("seek(%d values, from %d, %d) = %d, want %d", n, from, x, got, want)
				}
			}
		}
	}
}
