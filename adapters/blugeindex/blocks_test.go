package blugeindex

import (
	"context"
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
