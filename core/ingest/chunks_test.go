package ingest_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/ingest"
)

// TestLargeChangeIndexedInChunksAppearsWhole applies releases larger than
// the index chunk (7 here, so a release of 50 is indexed in 8 changes)
// while readers search: inside a read, the index finds none or all of the
// release's resources, as many as the store holds under that release, and
// once the ingest answers it finds them all.
func TestLargeChangeIndexedInChunksAppearsWhole(t *testing.T) {
	ctx := context.Background()
	store, index := storeAndIndex(t)
	vis := core.NewVisibility()
	svc := ingest.New(ingest.Config{IndexChunk: 7}, store, index, vis, nil, noEvents{}, ingest.Sources{},
		quiet)

	const n = 50
	word := func(k int) string { return fmt.Sprintf("q%cx%c", 'a'+k, 'a'+(k*7+3)%26) }
	release := func(k int) core.Release {
		rel := core.Release{Catalog: core.DKBR, Origin: core.OriginFile, Version: fmt.Sprint("R", k)}
		for i := range n {
			v := float64(k)
			rel.Resources = append(rel.Resources, core.Resource{ID: fmt.Sprintf("#P%03d", i),
				NameDA: fmt.Sprintf("Prøvesten %s model %d", word(k), i), Unit: "kg", A1A3: &v})
		}
		return rel
	}
	keys := make([]core.Key, n)
	for i := range keys {
		keys[i] = core.Key{Catalog: core.DKBR, ID: fmt.Sprintf("#P%03d", i)}
	}
	found := func(k int) int {
		hits, err := index.Search(ctx, core.TextQuery{Text: word(k), Limit: 100})
		if err != nil {
			t.Error(err)
		}
		return len(hits)
	}

	if _, err := svc.Apply(ctx, release(1)); err != nil {
		t.Fatal(err)
	}
	var done atomic.Bool
	var reads atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 2 {
		wg.Go(func() {
			for !done.Load() {
				err := vis.Read(nil, func() error {
					srs, err := store.GetMany(ctx, keys)
					if err != nil {
						return err
					}
					stored := map[int]int{}
					for _, sr := range srs {
						stored[int(*sr.Resource.A1A3)]++
					}
					for k := 1; k <= 4; k++ {
						if got := found(k); got != stored[k] || (got != 0 && got != n) {
							return fmt.Errorf("release %d: the index finds %d, the store holds %d", k, got, stored[k])
						}
					}
					return nil
				})
				reads.Add(1)
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for k := 2; k <= 4; k++ {
		res, err := svc.Apply(ctx, release(k))
		if err != nil {
			t.Fatal(err)
		}
		if res.Upserted != n {
			t.Fatalf("release %d upserted %d", k, res.Upserted)
		}
		if got := found(k); got != n {
			t.Fatalf("release %d answered with %d of %d searchable", k, got, n)
		}
	}
	done.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if found(1) != 0 || found(3) != 0 || found(4) != n {
		t.Errorf("after the last release: %d %d %d", found(1), found(3), found(4))
	}
	t.Logf("%d reads during the ingests", reads.Load())
}
